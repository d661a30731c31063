#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# What the node service costs the processes it does not trace (issue 34):
# single-process workloads of an unprivileged user, in no job, run alone
# and beside `memattr-bpf daemon` (its defaults, or --daemon-args), as root:
#   storm1    one thread touching 64 MiB page by page (page faults)
#   storm8    8 threads of one process, 16 MiB each
#   getppid   a syscall that is not a memory request
#   readzero  read(2) of 64 bytes from /dev/zero
#   spawn     fork + exec of /bin/true, waited for
# Each repetition runs every workload alone and beside the service, in two
# blocks whose order alternates from one repetition to the next; the
# service is started (programs loaded, /metrics answering) before its block
# and stopped after it, outside any timed part. Prints a Markdown table:
# medians, ranges, the ratio of medians and the range of the repetitions'
# own ratios.
#
#   sudo tools/bench/beside_daemon.sh [--reps N] [--seconds S] [--results DIR]
#        [--daemon-args "ARGS"] [--only "WORKLOADS"] [--spawn-n N] [--update-doc FILE]
#
#   --reps N          repetitions (default 7)
#   --seconds S       time box of each timed workload (default 3)
#   --daemon-args A   more arguments for the daemon (e.g. "--attribution exact")
#   --only W          these workloads only (e.g. "spawn"; not with --update-doc)
#   --spawn-n N       commands of each spawn run (default 300)
#   --results DIR     raw figures (default /tmp/memattr-beside-daemon-<UTC time>)
#   --update-doc FILE put the table into FILE's block of this script
#                     (BENCHMARKS.md)
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
REPS=7 SECS=3 DARGS=() DOC="" ONLY="" SPAWN_N=300
RES=/tmp/memattr-beside-daemon-$(date -u +%Y%m%dT%H%M%SZ)
USER_=${MEMATTR_TEST_USER:-memattr-test}

die() { echo "beside_daemon.sh: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
	case $1 in
	--reps) REPS=${2:?}; shift 2 ;;
	--seconds) SECS=${2:?}; shift 2 ;;
	--daemon-args) read -r -a DARGS <<<"${2?}"; shift 2 ;;
	--only) ONLY=${2:?}; shift 2 ;;
	--spawn-n) SPAWN_N=${2:?}; shift 2 ;;
	--results) RES=${2:?}; shift 2 ;;
	--update-doc) DOC=${2:?}; shift 2 ;;
	-h | --help) sed -n '3,28p' "$0"; exit 0 ;;
	*) die "unknown argument '$1' (--help)" ;;
	esac
done
for w in $ONLY; do
	case $w in storm1 | storm8 | getppid | readzero | spawn) ;; *) die "--only: no workload '$w'" ;; esac
done
[ -z "$ONLY" ] || [ -z "$DOC" ] || die "--only and --update-doc: the document's table holds every workload"
[ "$(id -u)" = 0 ] || die "run as root (the node service loads BPF programs)"
id "$USER_" >/dev/null 2>&1 || die "no user $USER_ (MEMATTR_TEST_USER)"
[ -x "$REPO/memattr-bpf" ] || die "build the tool first (make)"
mkdir -p "$RES"
chmod 755 "$RES"

BIN=$RES/bin
make -s -C "$REPO/tools/bench/workloads" OUT="$BIN" >/dev/null
chmod -R a+rX "$BIN"

DAEMON=""
SPOOL=$RES/spool
cleanup() {
	if [ -n "$DAEMON" ]; then
		kill -TERM "$DAEMON" 2>/dev/null || true
		wait "$DAEMON" 2>/dev/null || true
	fi
}
trap cleanup EXIT

daemon_start() {
	local port=$((20000 + RANDOM % 20000))
	"$REPO/memattr-bpf" daemon --spool "$SPOOL" --listen "127.0.0.1:$port" "${DARGS[@]}" \
		2>>"$RES/daemon.err" &
	DAEMON=$!
	for _ in $(seq 300); do
		curl -sf -o /dev/null "http://127.0.0.1:$port/metrics" && return 0
		kill -0 "$DAEMON" 2>/dev/null || break
		sleep 0.1
	done
	die "the daemon did not answer on /metrics (see $RES/daemon.err)"
}

daemon_stop() {
	kill -TERM "$DAEMON"
	wait "$DAEMON" || die "the daemon exited with an error (see $RES/daemon.err)"
	DAEMON=""
}

# run ITEM VARIANT REP PROG ARGS...: one workload as the user; its RESULT
# (and the process's own CPU time per page, where it gives it) to figures.tsv.
run() {
	local item=$1 variant=$2 rep=$3 out=$RES/$1.$2.$3.out v
	shift 3
	runuser -u "$USER_" -- "$BIN/$1" "${@:2}" >"$out" 2>&1 || die "$item failed: $(tail -1 "$out")"
	v=$(awk '/^RESULT/ { print $3 "\t" $4; exit }' "$out")
	[ -n "$v" ] || die "$item printed no RESULT (see $out)"
	printf '%s\t%s\t%s\t%s\n' "$item" "$variant" "$rep" "$v" >>"$RES/figures.tsv"
	v=$(awk '/^CPU ns_per_unit/ { print $3; exit }' "$out")
	[ -z "$v" ] || printf '%s\t%s\t%s\t%s\tns\n' "${item}cpu" "$variant" "$rep" "$v" >>"$RES/figures.tsv"
}

# wanted W: is workload W in this run?
wanted() { [ -z "$ONLY" ] || [[ " $ONLY " == *" $1 "* ]]; }

block() {
	local variant=$1 rep=$2
	! wanted storm1 || run storm1 "$variant" "$rep" storm --rate 0 --seconds "$SECS" --mib 64
	! wanted storm8 || run storm8 "$variant" "$rep" storm --rate 0 --seconds "$SECS" --mib 16 --threads 8
	! wanted getppid || run getppid "$variant" "$rep" sysloop --seconds "$SECS"
	! wanted readzero || run readzero "$variant" "$rep" readloop --seconds "$SECS"
	! wanted spawn || run spawn "$variant" "$rep" spawnloop --n "$SPAWN_N"
}

T0=$(date +%s)
: >"$RES/figures.tsv"
for r in $(seq "$REPS"); do
	order=(alone beside)
	[ $((r % 2)) = 0 ] && order=(beside alone)
	for v in "${order[@]}"; do
		if [ "$v" = beside ]; then
			daemon_start
			block beside "$r"
			daemon_stop
		else
			block alone "$r"
		fi
	done
	echo "beside_daemon.sh: repetition $r of $REPS done" >&2
done

python3 "$REPO/tools/bench/beside_daemon_table.py" "$RES/figures.tsv" \
	--commit "$(git -C "$REPO" rev-parse --short HEAD)" \
	--command "tools/bench/beside_daemon.sh --reps $REPS --seconds $SECS${DARGS[*]:+ --daemon-args \"${DARGS[*]}\"}${ONLY:+ --only \"$ONLY\"}$([ "$SPAWN_N" = 300 ] || echo " --spawn-n $SPAWN_N")" \
	--minutes "$(( ($(date +%s) - T0 + 59) / 60 ))" --daemon "${DARGS[*]:-(its defaults)}" \
	--date "$(date -u +%Y-%m-%dT%H:%M:%SZ)" --kernel "Linux $(uname -r)" \
	${DOC:+--update-doc "$DOC"} | tee "$RES/table.md"
