#!/bin/bash
# What the node service itself costs a job (issue 34): `memattr-bpf daemon`
# at its defaults (as tools/validate/run.sh --overhead-under daemon starts
# it: its own spool, no socket, no metrics endpoint) watching one job of a
# validation application, and per job-second of the job's wall time:
#   cpu_ms_per_s  the daemon's CPU (every thread's schedstat run time, ns),
#                 from just before the job starts until its session has
#                 ended (run_info.csv says finished,1: the final writes
#                 are in);
#   wakeups_per_s its voluntary context switches (each a sleep ended), and
#                 preempted_per_s its involuntary ones;
#   burst_max_ms  the longest time the daemon's main thread stayed on a CPU
#                 in one go (bpftrace on sched_switch), and burst_p99_ms;
#   job_cpu_s     the job's own CPU time (user + system of every process of
#                 it, as its launcher's wait collects them);
#   bpf_ms        the run time of the daemon's BPF programs meanwhile
#                 (kernel.bpf_stats_enabled, on only while the job runs; the
#                 programs run mostly in the job's processes, and are part
#                 of job_cpu_s then);
#   share_pct     (daemon CPU + BPF run time) / the job's CPU time without
#                 the BPF time: what the service takes, as a share of what
#                 the job needs. On a node whose cores the ranks fill, that
#                 is the slowdown it can cause through CPU; it leaves out
#                 what no counter shows (caches, the traced syscall path,
#                 locks): those only the untraced twin of a run shows, as
#                 tools/validate/run.sh --overhead-under daemon measures,
#                 inside this host's noise.
#   steady_pct    the same share from the settle mark (--settle S seconds
#                 after the job's start: its ranks started, MPI set up) to
#                 the job's exit: what a job pays per second once running,
#                 the rate a long job's share tends to;
#   oneoff_ms_per_rank  what the job's start (until the mark) and end (its
#                 session's last writes, after the exit) cost the daemon
#                 beyond that rate, per rank: paid once per job, whatever
#                 its length. A job too short for the mark has neither.
# A row per run in RESULTS/cpu.tsv; medians and ranges per configuration
# printed at the end. The job's wall time is not a result here (one run
# has no untraced twin): see tools/validate/run.sh --overhead-under daemon.
#
#   sudo tools/bench/daemon_cpu.sh --lulesh DIR --hpccg DIR --cloverleaf DIR \
#        [--runs N] [--results DIR] [--tool PATH] [--tool-args "ARGS"] \
#        [--configs "lulesh:mpich:8 lulesh:openmpi:8 hpccg:mpich:4 cloverleaf:openmpi:2"]
#        [--no-bursts] [--build DIR (the applications' builds, kept between calls)]
#        [--perf (also perf record -g the daemon during the job: RUN/perf.data;
#                 its own cost then inflates cpu_ms_per_s)]
#        [--warm (the same job once before, unmeasured, under the same daemon:
#                 what a daemon left on pays per job, the libraries' CFI and
#                 symbols it loads once per file already loaded)]
#        [--beside "CMD" (run CMD, PID replaced by the daemon's, during the
#                 job; stopped with SIGINT; its output in RUN/beside.out)]
#        [--no-bpf-stats (no BPF run time: bpf_ms and share_pct without it)]
#        [--settle S (the settle mark, seconds after the job's start; default 1.5)]
#        [--update-doc FILE (the table into FILE's block of this script)]
#
# Runs load BPF programs: take the integration lock around it
# (flock /tmp/ma-integ.lock ...). Sizes as tools/validate/run.sh's.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
source "$REPO/tools/lib/pidtrack.sh"
source "$REPO/tools/lib/detach.sh"
source "$REPO/tools/lib/clover_deck.sh"

die() { echo "daemon_cpu: $*" >&2; exit 2; }
SRC_LULESH="" SRC_HPCCG="" SRC_CLOVER="" RES="" RUNS=3 BURSTS=1 BUILD="" PERF=0 BESIDE="" WARM=0
BPF_STATS=1 DOC="" SETTLE=1.5
ARGS_GIVEN="$*"
TOOL=${MEMATTR_BIN:-$REPO/memattr-bpf}
TOOL_ARGS=()
CONFIGS="lulesh:mpich:8 lulesh:openmpi:8 hpccg:mpich:4 cloverleaf:openmpi:2"
TEST_USER=${MEMATTR_TEST_USER:-memattr-test}
while [ $# -gt 0 ]; do
	case $1 in
	--lulesh) SRC_LULESH=${2:?}; shift 2 ;;
	--hpccg) SRC_HPCCG=${2:?}; shift 2 ;;
	--cloverleaf) SRC_CLOVER=${2:?}; shift 2 ;;
	--runs) RUNS=${2:?}; shift 2 ;;
	--results) RES=${2:?}; shift 2 ;;
	--tool) TOOL=${2:?}; shift 2 ;;
	--tool-args) read -r -a TOOL_ARGS <<<"${2?}"; shift 2 ;;
	--configs) CONFIGS=${2:?}; shift 2 ;;
	--no-bursts) BURSTS=0; shift ;;
	--build) BUILD=${2:?}; shift 2 ;;
	--perf) PERF=1; shift ;;
	--beside) BESIDE=${2:?}; shift 2 ;;
	--warm) WARM=1; shift ;;
	--no-bpf-stats) BPF_STATS=0; shift ;;
	--settle) SETTLE=${2:?}; shift 2 ;;
	--update-doc) DOC=${2:?}; shift 2 ;;
	-h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
	*) die "unknown argument '$1'" ;;
	esac
done
[ "$(id -u)" -eq 0 ] || die "must run as root"
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || die "--runs wants a positive number"
[[ $SETTLE =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "--settle wants seconds"
[ -x "$TOOL" ] || die "no tool at $TOOL"
id -u "$TEST_USER" >/dev/null 2>&1 || die "no user $TEST_USER"
[ "$BURSTS" -eq 0 ] || command -v bpftrace >/dev/null || die "no bpftrace (--no-bursts runs without)"
[ -z "$DOC" ] || [ -w "$DOC" ] || die "cannot write $DOC"
if [ "$BPF_STATS" -eq 1 ]; then
	command -v bpftool >/dev/null || die "no bpftool (--no-bpf-stats runs without)"
	[ "$(sysctl -n kernel.bpf_stats_enabled)" = 0 ] ||
		die "kernel.bpf_stats_enabled is on: someone else is measuring (--no-bpf-stats runs without)"
fi
STARTED=$(date -u +%Y-%m-%dT%H:%M:%SZ)
START_S=$SECONDS

HPCCG_DIMS=${HPCCG_DIMS:-128 64 128}
LULESH_SIZE=${LULESH_SIZE:-30}
LULESH_ITERS_1=${LULESH_ITERS_1:-200}
LULESH_ITERS_8=${LULESH_ITERS_8:-30}
CLOVER_CELLS=${CLOVER_CELLS:-640}
CLOVER_STEPS=${CLOVER_STEPS:-120}

RES=${RES:-/tmp/memattr-daemon-cpu-$(date -u +%Y%m%dT%H%M%SZ)}
BUILD=${BUILD:-$RES/build}
mkdir -p "$RES/bin" "$BUILD" || die "cannot create $RES or $BUILD"
RES=$(cd "$RES" && pwd)
BUILD=$(cd "$BUILD" && pwd)
chmod 755 "$RES"
# A copy: a rebuild during the runs must not change what is measured.
cp "$TOOL" "$RES/bin/memattr-bpf"
rm -rf "$RES/bin/uprobe_specs"
cp -r "$REPO/uprobe_specs" "$RES/bin/uprobe_specs"
TOOL_RUN=$RES/bin/memattr-bpf
log() { printf '[daemon_cpu %s] %s\n' "$(date +%T)" "$*" >&2; }

cleanup() {
	set +e
	[ "$BPF_STATS" -eq 0 ] || sysctl -q kernel.bpf_stats_enabled=0
	if [ ${#TRACKED[@]} -gt 0 ] && any_tracked_running; then
		signal_tracked INT
		for _ in $(seq 60); do any_tracked_running || break; sleep 0.1; done
		any_tracked_running && signal_tracked KILL
	fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

TEST_UID=$(id -u "$TEST_USER")
TEST_GID=$(id -g "$TEST_USER")
SUDO_VARS=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
	HOME=/root USER=root LOGNAME=root SUDO_USER="$TEST_USER"
	SUDO_UID="$TEST_UID" SUDO_GID="$TEST_GID")
USER_HOME=$(getent passwd "$TEST_USER" | cut -d: -f6)
[ -d "$USER_HOME" ] || USER_HOME=/tmp
USER_VARS=(PATH=/usr/local/bin:/usr/bin:/bin HOME="$USER_HOME" USER="$TEST_USER" LOGNAME="$TEST_USER")

# build APP MPI -> the binary (cached in RESULTS/build), as tools/validate/run.sh builds it
build() {
	local app=$1 m=$2 b=$BUILD/$2/$1
	case $app in
	hpccg) [ -x "$b/test_HPCCG" ] && { echo "$b/test_HPCCG"; return; } ;;
	lulesh) [ -x "$b/lulesh2.0" ] && { echo "$b/lulesh2.0"; return; } ;;
	cloverleaf) [ -x "$b/clover_leaf" ] && { echo "$b/clover_leaf"; return; } ;;
	esac
	mkdir -p "$b"
	case $app in
	hpccg)
		[ -n "$SRC_HPCCG" ] || return 1
		"mpicxx.$m" -O3 -g -DUSING_MPI -I"$SRC_HPCCG" "$SRC_HPCCG"/*.cpp -o "$b/test_HPCCG" >"$b.log" 2>&1 &&
			echo "$b/test_HPCCG" ;;
	lulesh)
		[ -n "$SRC_LULESH" ] || return 1
		"mpicxx.$m" -O3 -g -DUSE_MPI=1 -I"$SRC_LULESH" \
			"$SRC_LULESH"/lulesh.cc "$SRC_LULESH"/lulesh-comm.cc "$SRC_LULESH"/lulesh-viz.cc \
			"$SRC_LULESH"/lulesh-util.cc "$SRC_LULESH"/lulesh-init.cc -lm -o "$b/lulesh2.0" >"$b.log" 2>&1 &&
			echo "$b/lulesh2.0" ;;
	cloverleaf)
		[ -n "$SRC_CLOVER" ] || return 1
		(cd "$SRC_CLOVER" && tar --exclude=.git -cf - .) | (cd "$b" && tar -xf -) &&
			make -C "$b" -j2 COMPILER=GNU OMP= MPI_COMPILER="mpif90.$m" C_MPI_COMPILER="mpicc.$m" \
				clover_leaf >"$b.log" 2>&1 &&
			echo "$b/clover_leaf" ;;
	esac
}

launcher() {
	case $1 in
	openmpi) echo "mpirun.openmpi --oversubscribe -np $2" ;;
	mpich) echo "mpirun.mpich -np $2" ;;
	esac
}

app_args() {	# APP NP WORKDIR
	case $1 in
	hpccg) echo "$HPCCG_DIMS" ;;
	lulesh) echo "-s $LULESH_SIZE -i $(if [ "$2" -gt 1 ]; then echo "$LULESH_ITERS_8"; else echo "$LULESH_ITERS_1"; fi)" ;;
	cloverleaf)
		clover_deck "$3/clover.in" "$CLOVER_CELLS" "$CLOVER_STEPS" "$TEST_USER"
		echo "" ;;
	esac
}

# cpu_ns PID: run time of every thread of PID, ns; ctx PID: "voluntary involuntary"
cpu_ns() {
	local t s=0 v
	for t in /proc/"$1"/task/*/schedstat; do
		read -r v _ <"$t" 2>/dev/null && s=$((s + v))
	done
	echo "$s"
}
ctx() {
	awk '/^voluntary_ctxt_switches/ { v += $2 } /^nonvoluntary_ctxt_switches/ { n += $2 }
		END { print v + 0, n + 0 }' /proc/"$1"/task/*/status 2>/dev/null
}
now() { echo "$EPOCHREALTIME"; }
# children_cpu FILE: user + system seconds of the waited children, from `times` (run in this shell) in FILE
children_cpu() {
	awk 'NR == 2 { s = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); s += a[1] * 60 + a[2] } printf "%.3f", s }' "$1"
}

printf 'app\tmpi\tnp\trun\twall_s\tcpu_ms\tcpu_ms_per_s\twakeups_per_s\tpreempted_per_s\tburst_max_ms\tburst_p99_ms\tload1\tjob_cpu_s\tbpf_ms\tshare_pct\tsteady_pct\toneoff_ms_per_rank\n' >"$RES/cpu.tsv"

one_run() {	# APP MPI NP RUN EXE
	local app=$1 m=$2 np=$3 run=$4 exe=$5 d=$RES/runs/$1-$2-np$3-$4
	local dpid bpid="" t0 t1 c0 c1 v0 n0 v1 n1 jpid rc=0 wall cpu load
	rm -rf "$d"
	mkdir -p "$d/work"
	chown "$TEST_USER" "$d/work"
	local -a cmd
	read -r -a cmd <<<"$(launcher "$m" "$np") $exe $(app_args "$app" "$np" "$d/work")"
	env -i "${SUDO_VARS[@]}" "$TOOL_RUN" daemon ${TOOL_ARGS[@]+"${TOOL_ARGS[@]}"} --spool "$d/spool" \
		--listen none --socket none >"$d/daemon.out" 2>"$d/daemon.err" &
	dpid=$!
	track_pid "$dpid"
	t0=$EPOCHREALTIME
	until grep -q '^memattr-bpf: daemon: watching' "$d/daemon.err"; do
		pid_running "$dpid" || { log "$d: the daemon did not start"; return 1; }
		sleep 0.05
	done
	if [ "$WARM" -eq 1 ]; then
		local w=$d/warm
		mkdir -p "$w"
		chown "$TEST_USER" "$w"
		read -r -a wcmd <<<"$(launcher "$m" "$np") $exe $(app_args "$app" "$np" "$w")"
		runuser -u "$TEST_USER" -- env -i --chdir="$w" "${USER_VARS[@]}" \
			"PBS_JOBID=daemon-cpu-warm-$app-$m-$run" "${wcmd[@]}" >"$d/warm.out" 2>&1
		for _ in $(seq 100); do
			grep -qs '^finished,1' "$d"/spool/daemon-cpu-warm-*/run_info.csv && break
			sleep 0.05
		done
	fi
	if [ "$BURSTS" -eq 1 ]; then
		# The main thread's on-CPU spans, switch in to switch out.
		bpftrace -e "tracepoint:sched:sched_switch {
			if (args->next_pid == $dpid) { @in = nsecs; }
			if (args->prev_pid == $dpid && @in > 0) { @us = hist((nsecs - @in) / 1000); @max_us = max((nsecs - @in) / 1000); @in = 0; }
		}" >"$d/bursts.txt" 2>"$d/bpftrace.err" &
		bpid=$!
		track_pid "$bpid"
		until grep -q '^Attaching' "$d/bursts.txt" 2>/dev/null; do
			pid_running "$bpid" || { log "$d: bpftrace did not start"; break; }
			sleep 0.05
		done
	fi
	sleep 1		# the daemon's start (programs loaded) behind it
	local ppid=""
	if [ "$PERF" -eq 1 ]; then
		perf record -q -F 1999 --call-graph dwarf,32768 -p "$dpid" -o "$d/perf.data" >"$d/perf.out" 2>&1 &
		ppid=$!
		track_pid "$ppid"
		sleep 0.5
	fi
	local xpid=""
	if [ -n "$BESIDE" ]; then
		${BESIDE//PID/$dpid} >"$d/beside.out" 2>&1 &
		xpid=$!
		track_pid "$xpid"
		sleep 0.5
	fi
	load=$(cut -d' ' -f1 /proc/loadavg)
	if [ "$BPF_STATS" -eq 1 ]; then
		sysctl -q kernel.bpf_stats_enabled=1
		python3 "$HERE/bpfstats.py" snap "$dpid" >"$d/bpf0.json"
	fi
	c0=$(cpu_ns "$dpid")
	read -r v0 n0 <<<"$(ctx "$dpid")"
	times >"$d/times0"
	t0=$EPOCHREALTIME
	runuser -u "$TEST_USER" -- env -i --chdir="$d/work" "${USER_VARS[@]}" \
		"PBS_JOBID=daemon-cpu-$app-$m-$run" "${cmd[@]}" >"$d/job.out" 2>&1 &
	jpid=$!
	# The settle mark, if the job runs that long: the daemon's CPU, the
	# job's and the programs' so far.
	local tm="" cm="" jm="" cx
	while pid_running "$jpid" && awk -v a="$t0" -v b="$EPOCHREALTIME" -v s="$SETTLE" \
			'BEGIN { exit !(b - a < s) }'; do
		sleep 0.02
	done
	if pid_running "$jpid"; then
		tm=$EPOCHREALTIME
		cm=$(cpu_ns "$dpid")
		jm=$(python3 "$HERE/tree_cpu.py" "$jpid") || jm=""
		[ "$BPF_STATS" -eq 0 ] || python3 "$HERE/bpfstats.py" snap "$dpid" >"$d/bpfm.json"
	fi
	wait "$jpid" || rc=$?
	t1=$EPOCHREALTIME
	cx=$(cpu_ns "$dpid")
	times >"$d/times1"
	# The job's end: its session's last writes (finished,1 in run_info.csv).
	for _ in $(seq 100); do
		grep -qs '^finished,1' "$d"/spool/daemon-cpu-"$app"-*/run_info.csv && break
		sleep 0.05
	done
	c1=$(cpu_ns "$dpid")
	read -r v1 n1 <<<"$(ctx "$dpid")"
	local bpf_ms="" bpf_late=0 job_cpu
	if [ "$BPF_STATS" -eq 1 ]; then
		python3 "$HERE/bpfstats.py" snap "$dpid" >"$d/bpf1.json"
		sysctl -q kernel.bpf_stats_enabled=0
		python3 "$HERE/bpfstats.py" diff "$d/bpf0.json" "$d/bpf1.json" >"$d/bpf.tsv"
		bpf_ms=$(awk -F'\t' '{ s += $3 } END { printf "%.1f", s / 1e6 }' "$d/bpf.tsv")
		if [ -n "$tm" ]; then
			python3 "$HERE/bpfstats.py" diff "$d/bpfm.json" "$d/bpf1.json" >"$d/bpf_late.tsv"
			bpf_late=$(awk -F'\t' '{ s += $3 } END { printf "%.1f", s / 1e6 }' "$d/bpf_late.tsv")
		fi
	fi
	job_cpu=$(awk -v a="$(children_cpu "$d/times0")" -v b="$(children_cpu "$d/times1")" \
		'BEGIN { printf "%.3f", b - a }')
	[ -z "$bpid" ] || { kill -INT "$bpid"; wait "$bpid"; }
	[ -z "$ppid" ] || { kill -INT "$ppid"; wait "$ppid"; }
	[ -z "$xpid" ] || { kill -INT "$xpid"; wait "$xpid"; }
	kill -TERM "$dpid"
	wait "$dpid" || rc=$?
	wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
	cpu=$(awk -v a="$c0" -v b="$c1" 'BEGIN { printf "%.1f", (b - a) / 1e6 }')
	local bmax="" bp99=""
	if [ -n "$bpid" ]; then
		bmax=$(awk '/^@max_us/ { printf "%.2f", $2 / 1000 }' "$d/bursts.txt")
		# p99 from the log2 histogram: the upper bound of the bucket where 99% is reached.
		bp99=$(awk '/^\[/ { gsub(/[\[\),]/, " "); lo = $1; hi = $2; n = $3; if (hi ~ /K$/) hi = hi * 1024;
			else if (hi ~ /M$/) hi = hi * 1048576; b[++k] = hi; c[k] = n; tot += n }
			END { for (i = 1; i <= k; i++) { s += c[i]; if (s >= 0.99 * tot) { printf "%.2f", b[i] / 1000; exit } } }' \
			"$d/bursts.txt")
	fi
	[ "$rc" -eq 0 ] || log "$d: exit status $rc (job or daemon)"
	grep -qs '^finished,1' "$d"/spool/daemon-cpu-"$app"-*/run_info.csv || log "$d: the job's session did not end within 5 s"
	# From the mark to the exit: the steady rate; the rest beyond it, once per job.
	local steady="" oneoff=""
	if [ -n "$tm" ] && [ -n "$jm" ]; then
		read -r steady oneoff < <(awk -v t0="$t0" -v tm="$tm" -v t1="$t1" -v c0="$c0" -v cm="$cm" \
			-v cx="$cx" -v c1="$c1" -v jc="$job_cpu" -v jm="$jm" -v bl="$bpf_late" -v np="$np" \
			'BEGIN { span = t1 - tm; late = (cx - cm) / 1e6; own = (jc - jm) * 1000 - bl;
				if (span <= 0 || own <= 0) exit;
				rate = late / span;
				printf "%.2f %.1f\n", 100 * (late + bl) / own,
					((cm - c0) / 1e6 - rate * (tm - t0) + (c1 - cx) / 1e6) / np }')
	fi
	awk -v app="$app" -v m="$m" -v np="$np" -v r="$run" -v w="$wall" -v c="$cpu" \
		-v v="$((v1 - v0))" -v n="$((n1 - n0))" -v bm="$bmax" -v bp="$bp99" -v l="$load" \
		-v jc="$job_cpu" -v bpf="$bpf_ms" -v st="$steady" -v oo="$oneoff" \
		'BEGIN { own = jc * 1000 - bpf; sh = own > 0 ? sprintf("%.2f", 100 * (c + bpf) / own) : "";
			printf "%s\t%s\t%s\t%s\t%s\t%s\t%.2f\t%.1f\t%.1f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", app, m, np, r, w, c, c / w, v / w, n / w, bm, bp, l, jc, bpf, sh, st, oo }' \
		>>"$RES/cpu.tsv"
	tail -1 "$RES/cpu.tsv" >&2
	wait_detached 10
}

log "results: $RES"
for cfg in $CONFIGS; do
	IFS=: read -r app m np <<<"$cfg"
	exe=$(build "$app" "$m") || die "cannot build $app with $m (log: $BUILD/$m/$app.log)"
	chmod -R a+rX "$BUILD"
	for r in $(seq 1 "$RUNS"); do
		one_run "$app" "$m" "$np" "$r" "$exe"
	done
done
chmod -R a+rX "$BUILD" "$RES/runs" 2>/dev/null
python3 "$HERE/daemon_cpu_table.py" "$RES/cpu.tsv" --date "$STARTED" \
	--minutes "$(( (SECONDS - START_S + 59) / 60 ))" \
	--commit "$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$REPO" diff --quiet HEAD 2>/dev/null || echo ' (work tree has uncommitted changes)')" \
	--kernel "Linux $(uname -r)" --command "tools/bench/daemon_cpu.sh $ARGS_GIVEN" \
	--daemon "${TOOL_ARGS[*]:-(its defaults)}" --settle "$SETTLE" ${DOC:+--update-doc "$DOC"} | tee "$RES/table.md"
