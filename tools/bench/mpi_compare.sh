#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The MPI library's own memory per rank, Open MPI against MPICH, on the same
# workloads at several job sizes: each job is traced from its launch
# (memattr-bpf -- mpirun...) and the `mpi` component's peak RSS and PSS per
# rank are read from summary.csv. Prints a Markdown table on stdout (the
# "MPI libraries compared" section of docs/benchmark-history.md); progress on stderr.
#
#   sudo tools/bench/mpi_compare.sh
#
# Optional environment:
#   CMP_RANKS      job sizes (default "2 4 8")
#   CMP_WORKLOADS  "hold alltoall miniapp" (default: all three)
#   CMP_MPIS       "openmpi mpich" (default: both)
#   CMP_KEEP=1     keep the scratch dir (every run's CSVs and logs)
#   MEMATTR_BIN    the tool (default ./memattr-bpf, built if missing)
#
# Jobs run as the unprivileged user memattr-bench (as tools/bench/run.sh
# does), the tool as root with SUDO_UID set, so it starts the job as that
# user. Everything this script starts is recorded (pid + start time) and
# only that is ever signalled.
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/../.." && pwd)
TOOL=${MEMATTR_BIN:-$REPO/memattr-bpf}
BENCH_USER=${MEMATTR_BENCH_USER:-memattr-bench}
RANKS=${CMP_RANKS:-2 4 8}
WORKLOADS=${CMP_WORKLOADS:-hold alltoall miniapp}
MPIS=${CMP_MPIS:-openmpi mpich}
if [ -x /usr/bin/python3 ]; then PY=/usr/bin/python3; else PY=python3; fi

log() { printf '[mpi_compare %s] %s\n' "$(date +%T)" "$*" >&2; }
die() { printf 'mpi_compare: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "must run as root (memattr-bpf loads BPF programs)"

SCR=""
# shellcheck source=../lib/pidtrack.sh
source "$REPO/tools/lib/pidtrack.sh"
cleanup() {
	local rc=$?
	set +e
	if [ ${#TRACKED[@]} -gt 0 ] && any_tracked_running; then
		signal_tracked INT	# the tool flushes, detaches and ends its job
		for _ in $(seq 60); do any_tracked_running || break; sleep 0.1; done
		any_tracked_running && signal_tracked KILL
	fi
	if [ -n "$SCR" ] && [ -d "$SCR" ]; then
		if [ "$rc" -eq 0 ] && [ -z "${CMP_KEEP:-}" ]; then rm -rf "$SCR"; else echo "mpi_compare: kept $SCR" >&2; fi
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

"$REPO/tools/install-deps.sh" >&2
[ -x "$TOOL" ] || make -s -C "$REPO" -j2 >&2
id -u "$BENCH_USER" >/dev/null 2>&1 || useradd -m -s /bin/bash "$BENCH_USER" 2>/dev/null ||
	id -u "$BENCH_USER" >/dev/null 2>&1 || die "cannot create user $BENCH_USER"
SCR=$(mktemp -d /tmp/memattr-mpicmp.XXXXXX)
chmod 755 "$SCR"

# The same sources built for each MPI, with each MPI's own compiler.
for mpi in $MPIS; do
	case $mpi in
	openmpi) cc=mpicc.openmpi ;;
	mpich) cc=mpicc.mpich ;;
	*) die "CMP_MPIS: unknown MPI '$mpi' (openmpi, mpich)" ;;
	esac
	command -v "$cc" >/dev/null || die "no $cc: install the $mpi development package (tools/install-deps.sh)"
	make -s -C "$BENCH_DIR/workloads" OUT="$SCR/bin-$mpi" MPICC="$cc" \
		"$SCR/bin-$mpi/hold" "$SCR/bin-$mpi/alltoall_alloc" "$SCR/bin-$mpi/miniapp" >&2
done
chmod -R a+rX "$SCR"

# The built-in specs, plus -- until the `forward` statement is merged (its
# lines in mpich.spec are still disabled) -- libucm classed with libc, the
# only forwarder today's parser knows: otherwise every block an MPICH rank's
# application mallocs through UCX's hooked mmap/brk would count as MPI's and
# the comparison would be meaningless. libucm's own ~100 KiB of code pages
# then count as libc rather than mpi (said under the table).
SPECS=$SCR/specs
mkdir -p "$SPECS"
cp "$REPO"/uprobe_specs/*.spec "$SPECS/"
STANDIN=0
if ! grep -q '^forward ' "$REPO/uprobe_specs/mpich.spec"; then
	STANDIN=1
	printf 'component libc\nlibrary libucm.so\n' >"$SPECS/00-forward-standin.spec"
fi

SUDO_ENV=(env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
	HOME=/root USER=root LOGNAME=root SUDO_USER="$BENCH_USER"
	SUDO_UID="$(id -u "$BENCH_USER")" SUDO_GID="$(id -g "$BENCH_USER")")

RESULTS=$SCR/results.tsv
: >"$RESULTS"
run_one() {	# run_one MPI WORKLOAD NP
	local mpi=$1 w=$2 np=$3 bin args launcher out rc=0
	bin=$SCR/bin-$mpi
	case $w in
	hold) args=("$bin/hold" --mib 16) ;;	# MPI_Init, a barrier, 1 s idle
	alltoall) args=("$bin/alltoall_alloc" --seconds 2) ;;	# 2 KiB / 4 MiB per peer
	miniapp) args=("$bin/miniapp" --n 3) ;;	# halo exchanges + allreduce
	*) die "CMP_WORKLOADS: unknown workload '$w'" ;;
	esac
	case $mpi in
	openmpi) launcher=(mpirun.openmpi --oversubscribe) ;;
	mpich) launcher=(mpirun.mpich) ;;
	esac
	out=$SCR/out-$mpi-$w-$np
	log "$mpi $w np=$np"
	"${SUDO_ENV[@]}" "$TOOL" --quiet --spec-dir "$SPECS" --output "$out" -- \
		"${launcher[@]}" -np "$np" "${args[@]}" >"$out.log" 2>&1 &
	local pid=$!
	track_pid "$pid"
	wait "$pid" || rc=$?
	[ "$rc" -eq 0 ] || die "$mpi $w np=$np: exit status $rc (see $out.log; CMP_KEEP=1 keeps it)"
	"$PY" - "$out/summary.csv" "$mpi" "$w" "$np" >>"$RESULTS" <<'EOF'
import csv, statistics, sys
path, mpi, w, np = sys.argv[1:]
rows = [r for r in csv.DictReader(open(path)) if r["rank"] != ""]
ranks = {r["rank"] for r in rows}
if len(ranks) != int(np):
    sys.exit(f"{path}: {len(ranks)} ranks, expected {np}")
def col(comp, key):
    v = {r["rank"]: int(r[key]) for r in rows if r["component"] == comp}
    return [v.get(k, 0) for k in sorted(ranks)]
out = [mpi, w, np]
for comp, key in (("mpi", "peak_rss_bytes"), ("mpi", "peak_pss_bytes"), ("app", "peak_rss_bytes"),
                  ("total", "peak_rss_bytes")):
    v = col(comp, key)
    out += [statistics.mean(v), min(v), max(v)]
print("\t".join(str(x) for x in out))
EOF
}

for w in $WORKLOADS; do
	for np in $RANKS; do
		for mpi in $MPIS; do
			run_one "$mpi" "$w" "$np"
		done
	done
done

# The table: one row per workload and job size, per MPI the mean over ranks
# (min-max when the ranks differ by more than 0.1 MiB).
"$PY" - "$RESULTS" "$MPIS" "$STANDIN" <<'EOF'
import sys
path, mpis, standin = sys.argv[1], sys.argv[2].split(), sys.argv[3] == "1"
name = {"openmpi": "Open MPI", "mpich": "MPICH"}
res = {}
order = []
for line in open(path):
    f = line.rstrip("\n").split("\t")
    key = (f[1], int(f[2]))
    if key not in order:
        order.append(key)
    res[(f[0],) + key] = [float(x) for x in f[3:]]
M = 1024 * 1024
def cell(mean, lo, hi):
    s = f"{mean / M:.1f}"
    return s + (f" ({lo / M:.1f}-{hi / M:.1f})" if hi - lo > 0.1 * M else "")
head = ["workload", "ranks"]
for m in mpis:
    head += [f"{name[m]} mpi RSS", f"{name[m]} mpi PSS", f"{name[m]} app RSS", f"{name[m]} total RSS"]
print("| " + " | ".join(head) + " |")
print("|" + "---|" * len(head))
for w, np in order:
    row = [w, str(np)]
    for m in mpis:
        v = res.get((m, w, np))
        row += [cell(*v[i:i + 3]) for i in range(0, 12, 3)] if v else ["-"] * 4
    print("| " + " | ".join(row) + " |")
print()
print("Peak per rank in MiB (each component's own peak), mean over the job's ranks "
      "(min-max across ranks when they differ by more than 0.1 MiB).")
if standin:
    print("MPICH ran with libucm classed with libc (the forwarder stand-in; see the script).")
EOF
log "done"
