#!/bin/bash
# The node service's own cost (docs/benchmark-history.md, "Node service"), as root:
# daemon CPU and VmRSS idle and with JOBS jobs of RANKS ranks (mpi_hold,
# an unprivileged user), scrape latency, and what watching every exec
# costs processes it does not trace. Prints markdown rows on stdout.
#   tools/bench/daemon_bench.sh [JOBS] [RANKS] [SECONDS]
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
JOBS=${1:-4} RANKS=${2:-4} SECS=${3:-20}
USER_=${MEMATTR_TEST_USER:-memattr-test}
T=$(mktemp -d /tmp/memattr-dbench.XXXXXX)
chmod 755 "$T"
cp "$REPO/tests/workloads/bin/mpi_hold" "$T/"
PORT=$((20000 + RANDOM % 20000))
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$T"; }
trap cleanup EXIT

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
# measure PID SECONDS: "cpu% rss_mib"
measure() {
	local a b hz
	hz=$(getconf CLK_TCK)
	a=$(cpu_ticks "$1"); sleep "$2"; b=$(cpu_ticks "$1")
	awk -v a="$a" -v b="$b" -v s="$2" -v hz="$hz" -v r="$(rss_kib "$1")" \
		'BEGIN { printf "%.2f %.1f", 100 * (b - a) / hz / s, r / 1024 }'
}
execs() {	# wall seconds for N execs of /bin/true
	local t0=$EPOCHREALTIME
	for _ in $(seq "$1"); do /bin/true; done
	awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }'
}

base_exec=$(execs 2000)
"$REPO/memattr-bpf" daemon --spool "$T/spool" --listen "127.0.0.1:$PORT" 2>"$T/daemon.err" &
D=$!
PIDS+=("$D")
sleep 3
m() { curl -s "http://127.0.0.1:$PORT/metrics" | awk -v k="$1" '$1 == k { print $2 }'; }
e0=$(m memattr_execs_examined_total)
read -r idle_cpu idle_rss <<<"$(measure "$D" "$SECS")"
e1=$(m memattr_execs_examined_total)
idle_jobs=$(m memattr_jobs)
idle_procs=$(m memattr_processes)
with_exec=$(execs 2000)
# Interleaved, to see the machine's noise (other users share these cores).
base_exec2=$(execs 2000)
kill -STOP "$D"; base_exec3=$(execs 2000); kill -CONT "$D"
with_exec2=$(execs 2000)
for j in $(seq "$JOBS"); do
	runuser -u "$USER_" -- env -i PATH=/usr/bin:/bin HOME="$T" mpirun --oversubscribe -np "$RANKS" \
		-x "SLURM_JOB_ID=dbench-$j-$$" "$T/mpi_hold" --hold-mib 32 --hold-s $((SECS + 15)) \
		>"$T/job$j.out" 2>&1 &
	PIDS+=($!)
done
sleep 8
read -r busy_cpu busy_rss <<<"$(measure "$D" "$SECS")"
lat=$(for _ in $(seq 20); do curl -s -o /dev/null -w '%{time_total}\n' "http://127.0.0.1:$PORT/metrics"; done |
	sort -n | awk '{ a[NR] = $1 } END { printf "%.1f %.1f", 1000 * a[int(NR / 2) + 1], 1000 * a[NR] }')
size=$(curl -s "http://127.0.0.1:$PORT/metrics" | wc -c)
series=$(curl -s "http://127.0.0.1:$PORT/metrics" | grep -c '^memattr_rank_')
jobs=$(curl -s "http://127.0.0.1:$PORT/metrics" | awk '/^memattr_jobs / { print $2 }')
procs=$(curl -s "http://127.0.0.1:$PORT/metrics" | awk '/^memattr_processes / { print $2 }')
read -r lat_med lat_max <<<"$lat"
echo "| daemon without jobs of its own ($idle_jobs jobs, $idle_procs processes of other users' tests traced; $((e1 - e0)) execs examined in ${SECS} s), --interval 1000 | $idle_cpu % | $idle_rss MiB | |"
echo "| $JOBS jobs x $RANKS ranks ($jobs jobs, $procs processes traced), --interval 1000 | $busy_cpu % | $busy_rss MiB | scrape median $lat_med ms, max $lat_max ms; $size bytes, $series rank series |"
echo "| 2000 execs of /bin/true, untraced | without daemon $base_exec s, $base_exec2 s; daemon stopped (SIGSTOP: BPF on, no reader) $base_exec3 s | with daemon $with_exec s, $with_exec2 s | |"
