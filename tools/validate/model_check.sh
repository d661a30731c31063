#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The memory model against runs it did not see (issue 36), as the WMTools
# thesis validated its own: each workload runs launched under the tool at
# the FIT rank counts (default 2 4 8), `memattr-bpf model` fits each
# component's per-rank peak on those runs and predicts it at the CHECK rank
# counts (default 16 32), which run too. Prints a Markdown table: per
# workload, MPI, component and checked rank count, the prediction with its
# interval, the measured peak, and the error as a share of the measured
# component and of the measured total.
#
#   sudo tools/validate/model_check.sh [--hpccg DIR] [--mpi openmpi|mpich|both]
#        [--fit "2 4 8"] [--check "16 32"] [--results DIR] [--update-doc FILE]
#        [--reuse]
#
# --reuse: the runs already in --results DIR are fitted again, not rerun (a
# change to the model, not to what the tool measures; the table says so).
#
# Workloads: alltoall_alloc (tools/bench/workloads: per-iteration send and
# receive buffers of 4 MiB per peer, so the program's peak grows with P, and
# the MPI library's per-peer state does too), and HPCCG (github.com/Mantevo/
# HPCCG, weak scaling at HPCCG_DIMS rows per rank, default 32 32 32) when
# --hpccg names its sources. Checked rank counts are oversubscribed on a
# small machine: memory does not care. Jobs run as the unprivileged
# MEMATTR_TEST_USER (default memattr-test), the tool as root, the job
# launched as `sudo memattr-bpf -- mpirun ...` would launch it.
# Exit status: 0 when every run and fit succeeded, 1 otherwise, 2 for usage.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
TEST_USER=${MEMATTR_TEST_USER:-memattr-test}
HPCCG_DIMS=${HPCCG_DIMS:-32 32 32}
FIT="2 4 8"
CHECK="16 32"
SRC_HPCCG=
MPIS=
RES=/tmp/memattr-model-$(date -u +%Y%m%dT%H%M%SZ)
DOC=
REUSE=

die() { echo "model_check: $*" >&2; exit 1; }
usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	--hpccg) SRC_HPCCG=${2:?}; shift ;;
	--mpi) MPIS=${2:?}; shift ;;
	--fit) FIT=${2:?}; shift ;;
	--check) CHECK=${2:?}; shift ;;
	--results) RES=${2:?}; shift ;;
	--update-doc) DOC=${2:?}; shift ;;
	--reuse) REUSE=1 ;;
	-h | --help) usage ;;
	*) echo "model_check: unknown argument $1" >&2; usage ;;
	esac
	shift
done
[ "$(id -u)" -eq 0 ] || die "must run as root (the tool traces the jobs)"
[ -x "$REPO/memattr-bpf" ] || die "build first: make"
id "$TEST_USER" >/dev/null 2>&1 || die "no user $TEST_USER (MEMATTR_TEST_USER)"
case $MPIS in
'') MPIS=openmpi; command -v mpirun.mpich >/dev/null && MPIS="openmpi mpich" ;;
both) MPIS="openmpi mpich" ;;
openmpi | mpich) ;;
*) die "--mpi: openmpi, mpich or both" ;;
esac
[ -z "$SRC_HPCCG" ] || [ -f "$SRC_HPCCG/main.cpp" ] || die "--hpccg $SRC_HPCCG: no HPCCG sources (main.cpp)"

mkdir -p "$RES" && chmod 755 "$RES" || die "cannot create $RES"
TEST_UID=$(id -u "$TEST_USER")
TEST_GID=$(id -g "$TEST_USER")
SUDO_VARS=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
	HOME=/root USER=root LOGNAME=root SUDO_USER="$TEST_USER"
	SUDO_UID="$TEST_UID" SUDO_GID="$TEST_GID")
# A copy of the tool and its specs: a rebuild during the runs changes nothing.
mkdir -p "$RES/bin"
cp "$REPO/memattr-bpf" "$RES/bin/" && cp -r "$REPO/uprobe_specs" "$RES/bin/" || die "cannot copy the tool"
TOOL=$RES/bin/memattr-bpf
echo "model_check: results in $RES (tool $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null))"

FAILED=()
build() {	# WORKLOAD MPI -> binary path
	local w=$1 m=$2 b=$RES/build/$m
	mkdir -p "$b"
	case $w in
	alltoall)
		"mpicc.$m" -O2 -g -std=gnu11 -D_GNU_SOURCE -I"$REPO/tools/bench/workloads" \
			"$REPO/tools/bench/workloads/alltoall_alloc.c" -o "$b/alltoall_alloc" >"$b/alltoall.log" 2>&1 &&
			echo "$b/alltoall_alloc" ;;
	hpccg)
		"mpicxx.$m" -O3 -g -DUSING_MPI -I"$SRC_HPCCG" "$SRC_HPCCG"/*.cpp -o "$b/test_HPCCG" \
			>"$b/hpccg.log" 2>&1 && echo "$b/test_HPCCG" ;;
	esac
}

run() {	# WORKLOAD MPI P BINARY: launched under the tool into RES/W/M/P
	local w=$1 m=$2 p=$3 bin=$4 out=$RES/$1/$2/$3 work=$RES/$1/$2/work-$3 args=() mpirun=()
	if [ -n "$REUSE" ] && [ -f "$out/summary.csv" ]; then
		echo "model_check: reusing $out"
		return 0
	fi
	mkdir -p "$work" "$(dirname "$out")"
	# The tool creates a sudo user's output as that user: in a directory of theirs.
	chown "$TEST_USER" "$work" "$(dirname "$out")"
	case $w in
	alltoall) args=(--seconds 3) ;;
	hpccg) read -ra args <<<"$HPCCG_DIMS" ;;
	esac
	case $m in
	openmpi) mpirun=(mpirun.openmpi --oversubscribe --mca mpi_yield_when_idle 1 -np "$p") ;;
	mpich) mpirun=(mpirun.mpich -np "$p") ;;
	esac
	env -i --chdir="$work" "${SUDO_VARS[@]}" "$TOOL" --output "$out" -- "${mpirun[@]}" "$bin" "${args[@]}" \
		>"$out.log" 2>&1 || { FAILED+=("$w $m $p ranks (log: $out.log)"); return 1; }
}

# measured OUT_DIR: "component bytes" lines, each the largest rank's peak rss.
measured() {
	awk -F, 'NR > 1 && $1 ~ /^[0-9]+$/ && $4 + 0 > peak[$3] { peak[$3] = $4 + 0 }
		END { for (c in peak) print c, peak[c] }' "$1/summary.csv"
}

TABLE=$RES/table.md
{
	echo "| workload | MPI | component | ranks | predicted MiB (95% interval) | measured MiB | error | error of total | model |"
	echo "|---|---|---|---|---|---|---|---|---|"
} >"$TABLE"
WORKLOADS=(alltoall)
[ -z "$SRC_HPCCG" ] || WORKLOADS+=(hpccg)
for w in "${WORKLOADS[@]}"; do
	for m in $MPIS; do
		bin=$(build "$w" "$m") || { FAILED+=("build of $w with $m"); continue; }
		ok=1
		for p in $FIT $CHECK; do
			echo "model_check: $w, $m, $p ranks"
			run "$w" "$m" "$p" "$bin" || ok=0
		done
		[ $ok = 1 ] || continue
		fit_dirs=()
		for p in $FIT; do fit_dirs+=("$RES/$w/$m/$p"); done
		for p in $CHECK; do
			pred=$RES/$w/$m/predict-$p.csv
			"$TOOL" model "${fit_dirs[@]}" --predict "$p" -o "$pred" --all >"$pred.txt" 2>&1 ||
				{ FAILED+=("model of $w $m at $p (log: $pred.txt)"); continue; }
			declare -A meas=()
			while read -r c b; do meas[$c]=$b; done < <(measured "$RES/$w/$m/$p")
			total=${meas[total]:-0}
			python3 - "$pred" "$w" "$m" "$p" "$total" "$(for c in "${!meas[@]}"; do printf '%s=%s ' "$c" "${meas[$c]}"; done)" \
				>>"$TABLE" <<-'EOF'
				import csv, sys
				pred, w, m, p, total = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5])
				meas = dict(kv.split("=") for kv in sys.argv[6].split())
				MiB = 1 << 20
				for r in csv.DictReader(open(pred)):
				    c = r["component"]
				    got = float(meas.get(c, 0))
				    if c != "total" and max(got, float(r["predict_bytes"] or 0)) < 0.01 * total:
				        continue
				    pb = float(r["predict_bytes"])
				    iv = (f" ({float(r['interval_low_bytes']) / MiB:.1f}-{float(r['interval_high_bytes']) / MiB:.1f})"
				          if r["interval_low_bytes"] else "")
				    err = f"{(pb - got) / got * 100:+.1f}%" if got else "n/a"
				    err_t = f"{(pb - got) / total * 100:+.1f}%" if total else "n/a"
				    model = r["model"]
				    if r.get("prediction_from") == "sum_of_components":
				        model = (f"sum of the components (its own model, {model}: "
				                 f"{float(r['fitted_alone_bytes']) / MiB:.1f})")
				    print(f"| {w} | {m} | {c} | {p} | {pb / MiB:.1f}{iv} | {got / MiB:.1f} | {err} | {err_t} | {model} |")
				EOF
			unset meas
		done
	done
done
cat "$TABLE"
if [ -n "$DOC" ]; then
	python3 - "$DOC" "$TABLE" "$FIT" "$CHECK" "$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null)" "$REUSE" <<-'EOF'
	import sys, time
	doc, table, fit, check, commit, reuse = sys.argv[1:7]
	begin, end = "<!-- model-check:begin -->", "<!-- model-check:end -->"
	text = open(doc).read()
	body = (f"{begin}\nGenerated by `tools/validate/model_check.sh` on {time.strftime('%Y-%m-%d', time.gmtime())}"
	        f" (tool {commit}): fitted at {fit} ranks, predicted and measured at {check}"
	        + (" (the runs of an earlier run of the script, fitted again)" if reuse else "") + ".\n\n"
	        + open(table).read() + end)
	if begin in text:
	    text = text[:text.index(begin)] + body + text[text.index(end) + len(end):]
	else:
	    text += "\n## Memory model: predicted against measured\n\n" + body + "\n"
	open(doc, "w").write(text)
	EOF
fi
if [ ${#FAILED[@]} -gt 0 ]; then
	printf 'model_check: failed: %s\n' "${FAILED[@]}" >&2
	exit 1
fi
