#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# make bench: overhead and accuracy benchmarks of memattr-bpf against
# untraced runs and the tools people use today; rewrites BENCHMARKS.md.
#
#   sudo make bench                 # full run (~15 min on 2 cores), rewrites BENCHMARKS.md
#   sudo BENCH_QUICK=1 make bench   # smoke run (~3 min); report in the scratch dir only
#
# Optional environment:
#   BENCH_SECTIONS   "overhead footprint storm neighbour costs accuracy" (default: all)
#   BENCH_WORKLOADS  "malloc p2p alltoall miniapp" (default: all)
#   BENCH_MODES      modes to run (default: all; see MODES below)
#   BENCH_REPORT     where the report goes (default: BENCHMARKS.md at the repo
#                    root for a full run, the scratch dir for a quick one)
#   BENCH_KEEP=1     keep the scratch dir (CSVs, logs, heaptrack/massif files)
#   MEMATTR_BIN      the tool (default ./memattr-bpf, built if missing)
#
# How it measures (details in BENCHMARKS.md): every job runs as the
# unprivileged user memattr-bench, the tracers as root. Each workload writes
# ready.<rank> once set up and waits for a go file, so a tracer that attaches
# to a running job (memattr-bpf --pid, bpftrace -p) is in place before the
# timed part, and untraced runs go through the same steps. Modes are
# interleaved (the order rotates every repetition); medians and min-max are
# reported. Everything this script starts is recorded (pid + start time) and
# only that is ever signalled.
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/../.." && pwd)
QUICK=${BENCH_QUICK:-0}
BENCH_USER=${MEMATTR_BENCH_USER:-memattr-bench}
TOOL=${MEMATTR_BIN:-$REPO/memattr-bpf}
if [ -x /usr/bin/python3 ]; then PY=/usr/bin/python3; else PY=python3; fi
T_START=$EPOCHREALTIME

if [ "$QUICK" = 1 ]; then
	BOX=0.3 REPS_CORE=2 REPS_PEER=1 REPS_MASSIF=1 MINIAPP_STEPS=3
	FOOT_RANKS="1 8 16" FOOT_SETTLE=1 FOOT_WINDOW=3
	STORM_SECONDS=2 STORM_STEPS="1:100000 1:0 4:0 4:0:1"
else
	BOX=1.0 REPS_CORE=7 REPS_PEER=3 REPS_MASSIF=2 MINIAPP_STEPS=6
	FOOT_RANKS="1 8 64" FOOT_SETTLE=3 FOOT_WINDOW=10
	STORM_SECONDS=4 STORM_STEPS="1:50000 1:100000 1:200000 1:0 2:0 4:0 4:0:1"
fi
SECTIONS=${BENCH_SECTIONS:-overhead footprint storm neighbour costs accuracy}
FOOT_RANKS=${BENCH_FOOT_RANKS:-$FOOT_RANKS}
WORKLOADS=${BENCH_WORKLOADS:-malloc p2p alltoall miniapp}
MODES_ALL="untraced default mpi-calls heap daemon heaptrack massif memleak memnesia"
MODES=${BENCH_MODES:-$MODES_ALL}
HOLD_MIB=16
LIBC=/lib/x86_64-linux-gnu/libc.so.6

log() { printf '[bench %s] %s\n' "$(date +%T)" "$*"; }
die() { printf 'bench: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "must run as root (memattr-bpf and bpftrace load BPF programs); try: sudo make bench"

# ---------------------------------------------------------------- processes
SCR=""
# shellcheck source=../lib/pidtrack.sh
source "$REPO/tools/lib/pidtrack.sh"
source "$REPO/tools/lib/detach.sh"

cleanup() {
	local rc=$?
	set +e
	if [ ${#TRACKED[@]} -gt 0 ] && any_tracked_running; then
		signal_tracked CONT	# the storm section may have stopped a tracer
		signal_tracked INT	# tracers flush and detach on SIGINT
		for _ in $(seq 60); do any_tracked_running || break; sleep 0.1; done
		signal_tracked TERM
		for _ in $(seq 40); do any_tracked_running || break; sleep 0.05; done
		any_tracked_running && signal_tracked KILL
	fi
	if [ -n "$SCR" ] && [ -d "$SCR" ]; then
		if [ "$rc" -eq 0 ] && [ -z "${BENCH_KEEP:-}" ] && [ "$QUICK" != 1 ]; then
			rm -rf "$SCR"
		else
			echo "bench: kept $SCR"
		fi
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

elapsed_since() { awk -v a="$1" -v b="$EPOCHREALTIME" -v l="$2" 'BEGIN { exit !(b - a >= l) }'; }
seconds_since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }

# wait_gone PID TIMEOUT: 0 once PID has exited (reaped if it is our child).
wait_gone() {
	local pid=$1 timeout=$2 t0=$EPOCHREALTIME
	while pid_running "$pid"; do
		elapsed_since "$t0" "$timeout" && return 1
		sleep 0.05
	done
	wait "$pid" 2>/dev/null || true
	return 0
}

# stop_pid PID TIMEOUT: wait for it to exit by itself; then SIGINT, SIGKILL.
stop_pid() {
	local pid=$1 timeout=$2
	wait_gone "$pid" "$timeout" && return 0
	is_ours_running "$pid" && kill -INT "$pid" 2>/dev/null
	wait_gone "$pid" 10 && return 0
	is_ours_running "$pid" && kill -KILL "$pid" 2>/dev/null
	wait_gone "$pid" 5 || true
}

# find_desc_exe ROOT EXE: the first process below ROOT running EXE (waits up to 2 s).
find_desc_exe() {
	local root=$1 exe c
	exe=$(readlink -f "$2")
	for _ in $(seq 200); do
		for c in "$root" $(descendants "$root"); do
			if [ "$(readlink "/proc/$c/exe" 2>/dev/null)" = "$exe" ]; then
				echo "$c"
				return 0
			fi
		done
		pid_running "$root" || return 0
		sleep 0.01
	done
}

# ---------------------------------------------------------------- set-up
log "installing packages (build, tests, bench)"
"$REPO/tools/install-deps.sh" >/dev/null
"$BENCH_DIR/install-deps.sh" >/dev/null
if [ ! -x "$TOOL" ]; then
	log "building memattr-bpf"
	make -s -C "$REPO" memattr-bpf || die "cannot build memattr-bpf (make in $REPO)"
fi

SCR=$(mktemp -d /tmp/memattr-bench.XXXXXX)
chmod 755 "$SCR"
# Measure one binary throughout: a copy (with its specs, which it finds next
# to itself), so a rebuild in the tree during the run changes nothing here.
mkdir -p "$SCR/tool"
cp "$TOOL" "$SCR/tool/memattr-bpf"
cp -r "$(dirname "$TOOL")/uprobe_specs" "$SCR/tool/uprobe_specs" 2>/dev/null || true
TOOL_SRC=$TOOL
TOOL=$SCR/tool/memattr-bpf
BIN=$SCR/bin
log "scratch dir $SCR; building the workloads"
make -s -C "$BENCH_DIR/workloads" OUT="$BIN" >/dev/null
chmod 755 "$BIN" "$BIN"/*
sed "s#LIBC#$LIBC#g" "$BENCH_DIR/peers/memleak.bt" >"$BIN/memleak.bt"
chmod 644 "$BIN/memleak.bt"

if ! id -u "$BENCH_USER" >/dev/null 2>&1; then
	useradd -m -s /bin/bash "$BENCH_USER" 2>/dev/null || id -u "$BENCH_USER" >/dev/null 2>&1 ||
		die "cannot create user $BENCH_USER"
fi
BENCH_HOME=$(getent passwd "$BENCH_USER" | cut -d: -f6)
if [ ! -d "$BENCH_HOME" ]; then
	BENCH_HOME=$SCR/home
	install -d -o "$BENCH_USER" -g "$(id -g "$BENCH_USER")" "$BENCH_HOME"
fi
AS_USER=(runuser -u "$BENCH_USER" -- env -i PATH=/usr/local/bin:/usr/bin:/bin
	HOME="$BENCH_HOME" USER="$BENCH_USER" LOGNAME="$BENCH_USER")

# Opt-in modes: present when the tool's --help names the flag.
HELP=$("$TOOL" --help 2>&1 || true)
declare -A MODE_FLAG=([default]="" [mpi-calls]="--mpi-calls" [heap]="--heap")
declare -A MODE_PRESENT=()
for m in mpi-calls heap; do
	if grep -q -- "${MODE_FLAG[$m]}" <<<"$HELP"; then MODE_PRESENT[$m]=1; fi
done

RES=$SCR/results
mkdir -p "$RES" "$SCR/runs"
printf 'workload\tmetric\tmode\trep\tvalue\tunit\n' >"$RES/overhead.tsv"
printf 'workload\tmode\trep\tevents\tdropped\ttool_elapsed_s\ttool_user_s\ttool_sys_s\ttool_maxrss_kb\tattachments\n' >"$RES/toolruns.tsv"
printf 'workload\tmode\tstatus\tcommand\n' >"$RES/commands.tsv"
: >"$RES/failures.txt"
{
	echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "quick=$QUICK"
	echo "scratch=$SCR"
	echo "box_s=$BOX"
	echo "reps_core=$REPS_CORE"
	echo "reps_peer=$REPS_PEER"
	echo "reps_massif=$REPS_MASSIF"
	echo "miniapp_steps=$MINIAPP_STEPS"
	echo "foot_settle_s=$FOOT_SETTLE"
	echo "foot_window_s=$FOOT_WINDOW"
	echo "storm_seconds=$STORM_SECONDS"
	echo "cost_reps=${BENCH_COST_REPS:-$([ "$QUICK" = 1 ] && echo 1 || echo 5)}"
	echo "hold_mib=$HOLD_MIB"
	echo "kernel=$(uname -r)"
	echo "cpus=$(nproc)"
	echo "cpu_model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
	echo "mem=$(free -g | awk '/^Mem:/ {print $2 " GiB"}')"
	echo "openmpi=$(dpkg-query -W -f='${Version}' libopenmpi3 2>/dev/null || echo '?')"
	echo "glibc=$(dpkg-query -W -f='${Version}' libc6 2>/dev/null || echo '?')"
	echo "heaptrack=$(heaptrack --version 2>/dev/null | head -1)"
	echo "valgrind=$(valgrind --version 2>/dev/null)"
	echo "bpftrace=$(bpftrace --version 2>/dev/null)"
	echo "tool_sha256=$(sha256sum "$TOOL" | cut -c1-16)"
	echo "tool_built=$(date -u -r "$TOOL_SRC" +%Y-%m-%dT%H:%M:%SZ)"
	echo "tool_commit=$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$REPO" diff --quiet HEAD -- userspace bpf 2>/dev/null || echo ' (with uncommitted changes in userspace/ or bpf/)')"
	echo "mode_mpi_calls=${MODE_PRESENT[mpi-calls]:-0}"
	echo "mode_heap=${MODE_PRESENT[heap]:-0}"
} >"$RES/meta.txt"

# ---------------------------------------------------------------- one run
# Per workload: MPI or not, ranks, program, arguments.
workload_setup() {
	W_MPI=1 W_NP=2
	case $1 in
	malloc) W_MPI=0 W_NP=1 W_BIN=malloc_bench W_ARGS=(--seconds "$BOX") ;;
	p2p) W_BIN=p2p W_ARGS=(--seconds "$BOX") ;;
	alltoall) W_BIN=alltoall_alloc W_ARGS=(--seconds "$BOX") ;;
	miniapp) W_BIN=miniapp W_ARGS=(--n "$MINIAPP_STEPS") ;;
	hold) W_BIN=hold W_ARGS=(--mib "$HOLD_MIB") ;;
	storm) W_MPI=0 W_NP=1 W_BIN=storm W_ARGS=() ;;
	*) die "unknown workload $1" ;;
	esac
}

new_run_dir() {
	RD=$SCR/runs/$1
	rm -rf "$RD"
	install -d -o "$BENCH_USER" -g "$(id -g "$BENCH_USER")" "$RD" "$RD/ready"
}

# launch_job NP: starts the workload as the bench user in $RD (W_*, WRAP, MPIOPTS set).
launch_job() {
	local np=$1 cmd
	shift
	if [ "$W_MPI" = 1 ]; then
		cmd=(mpirun --oversubscribe -np "$np" "${MPIOPTS[@]}" "${WRAP[@]}" "$BIN/$W_BIN" "${W_ARGS[@]}" "$@")
	else
		cmd=("${WRAP[@]}" "$BIN/$W_BIN" "${W_ARGS[@]}" "$@")
	fi
	JOB_CMD="${cmd[*]}"
	echo "$JOB_CMD" >"$RD/job.cmd"
	"${AS_USER[@]}" env -C "$RD" ${JOB_ENV[@]+"${JOB_ENV[@]}"} "${cmd[@]}" >"$RD/job.out" 2>&1 &
	JOB_PID=$!
	track_pid "$JOB_PID"
}

# wait_ready NP TIMEOUT: READY_PIDS[rank] from ready.<rank>.
wait_ready() {
	local np=$1 timeout=$2 t0=$EPOCHREALTIME r n
	READY_PIDS=()
	while :; do
		n=0
		for ((r = 0; r < np; r++)); do [ -s "$RD/ready/ready.$r" ] && n=$((n + 1)); done
		[ "$n" -eq "$np" ] && break
		pid_running "$JOB_PID" || { RUN_ERR="job exited before all $np processes were ready"; return 1; }
		elapsed_since "$t0" "$timeout" && { RUN_ERR="only $n of $np processes ready after ${timeout}s"; return 1; }
		sleep 0.05
	done
	for ((r = 0; r < np; r++)); do
		READY_PIDS[r]=$(cat "$RD/ready/ready.$r")
		track_pid "${READY_PIDS[r]}"
	done
	return 0
}

# start_memattr SELECTION EXTRA_FLAGS...: the tool as root, under /usr/bin/time.
# SELECTION is "--job <mpirun pid>" for an MPI job (the launcher's running
# descendants; --pid would take only mpirun itself and children it forks
# later) or "--pid <pid>" for a single process.
start_memattr() {
	local c
	TOOL_CMD="memattr-bpf $* --output $RD/out"
	echo "$TOOL_CMD" >"$RD/tool.cmd"
	/usr/bin/time -f '%e %U %S %M' -o "$RD/tool.time" \
		env --default-signal=INT "$TOOL" "$@" --output "$RD/out" \
		>"$RD/tool.out" 2>"$RD/tool.err" &
	TOOL_WRAP=$!
	track_pid "$TOOL_WRAP"
	# The tool itself sits below the background subshell and /usr/bin/time.
	TOOL_PID=$(find_desc_exe "$TOOL_WRAP" "$TOOL")
	[ -n "$TOOL_PID" ] && track_pid "$TOOL_PID"
	return 0
}

# count_probe_fds PID: what a tracer holds attached: BPF links and perf
# events (libbpf 1.1 attaches uprobes and tracepoints through perf events).
count_probe_fds() {
	local links perf
	links=$(find /proc/"$1"/fd -lname 'anon_inode:bpf_link' 2>/dev/null | wc -l)
	perf=$(find /proc/"$1"/fd -lname 'anon_inode:\[perf_event\]' 2>/dev/null | wc -l)
	echo "$links links + $perf perf events"
}

# stop_memattr: the tool exits by itself once what it traces has exited;
# SIGINT (flush and detach) if it has not within 60 s. /usr/bin/time then ends.
stop_memattr() {
	[ -n "$TOOL_PID" ] && stop_pid "$TOOL_PID" 60
	stop_pid "$TOOL_WRAP" 10
	wait_detached 10
}


# wait_memattr_ready TIMEOUT: the "memattr-bpf: tracing" line; TOOL_STARTUP_S.
wait_memattr_ready() {
	local timeout=$1 t0=$EPOCHREALTIME
	while ! grep -q '^memattr-bpf: tracing' "$RD/tool.err" 2>/dev/null; do
		if ! pid_running "$TOOL_WRAP"; then
			RUN_ERR="memattr-bpf exited before tracing: $(tail -3 "$RD/tool.err" | tr '\n' ' ')"
			return 1
		fi
		elapsed_since "$t0" "$timeout" && { RUN_ERR="memattr-bpf not tracing after ${timeout}s"; return 1; }
		sleep 0.02
	done
	TOOL_STARTUP_S=$(seconds_since "$t0")
}

# start_memleak: one bpftrace per process (-p PID), like memleak's -p.
start_memleak() {
	local r t0 c
	BT_PIDS=()
	for r in "${!READY_PIDS[@]}"; do
		BPFTRACE_MAP_KEYS_MAX=262144 bpftrace -p "${READY_PIDS[r]}" "$BIN/memleak.bt" \
			>"$RD/bpftrace.$r.out" 2>&1 &
		BT_PIDS[r]=$!
		track_pid "$!"
		c=$(find_desc_exe "$!" "$(command -v bpftrace)")
		[ -n "$c" ] && track_pid "$c"
	done
	TOOL_CMD="BPFTRACE_MAP_KEYS_MAX=262144 bpftrace -p <pid of each process> tools/bench/peers/memleak.bt (LIBC=$LIBC)"
	t0=$EPOCHREALTIME
	for r in "${!BT_PIDS[@]}"; do
		while ! grep -q '^Attaching' "$RD/bpftrace.$r.out" 2>/dev/null; do
			pid_running "${BT_PIDS[r]}" || { RUN_ERR="bpftrace exited: $(tail -2 "$RD/bpftrace.$r.out" | tr '\n' ' ')"; return 1; }
			elapsed_since "$t0" 60 && { RUN_ERR="bpftrace not attached after 60s"; return 1; }
			sleep 0.05
		done
	done
	sleep 0.2	# "Attaching" is printed just before the attach itself
}

record_fail() {
	# valgrind executes a uprobe's int3 literally: another tracer on the node
	# (memattr-bpf --mpi-calls/--heap, bpftrace) had probed the library.
	if grep -q 'signal 5 (SIGTRAP)\|Trace/breakpoint trap' "$RD/job.out" 2>/dev/null; then
		RUN_ERR="$RUN_ERR; SIGTRAP: a uprobe of another tracer on this node was in the library's code"
		RUN_TRAPPED=1
	fi
	log "  FAILED: $1 $2 rep $3: $RUN_ERR (logs in $RD)"
	printf '%s %s rep %s: %s\n' "$1" "$2" "$3" "$RUN_ERR" >>"$RES/failures.txt"
	signal_tracked_since "$TRACK_MARK"
}

# Stop what this run started (by recorded pid) when it went wrong.
signal_tracked_since() {
	local mark=$1 i entry pid
	for sig in INT TERM KILL; do
		for ((i = ${#TRACKED[@]} - 1; i >= mark; i--)); do
			entry=${TRACKED[i]}
			pid=${entry%%:*}
			if pid_running "$pid" && [ "$(pid_starttime "$pid")" = "${entry#*:}" ]; then
				kill "-$sig" "$pid" 2>/dev/null || true
			fi
		done
		sleep 1
	done
}

# run_one WORKLOAD MODE REP: one measured run; appends to overhead.tsv.
run_one() {
	local w=$1 mode=$2 rep=$3 t0 status=ok target=() probe_fds=""
	TRACK_MARK=${#TRACKED[@]}
	RUN_ERR=""
	workload_setup "$w"
	new_run_dir "$w.$mode.$rep"
	WRAP=() MPIOPTS=()
	TOOL_CMD=""
	case $mode in
	heaptrack) WRAP=(heaptrack -o "$RD/heaptrack.%p") ;;
	massif) WRAP=(valgrind -q --tool=massif "--massif-out-file=$RD/massif.%p") ;;
	memnesia) MPIOPTS=(-x "LD_PRELOAD=$BIN/libmemnesia_pmpi.so" -x "MEMNESIA_OUT=$RD") ;;
	esac
	t0=$EPOCHREALTIME
	JOB_ENV=()
	if [ "$mode" = daemon ]; then
		daemon_start || { record_fail "$w" "$mode" "$rep"; return 0; }
	fi
	launch_job "$W_NP" --ready-dir "$RD/ready" --go-file "$RD/go"
	wait_ready "$W_NP" 300 || { record_fail "$w" "$mode" "$rep"; return 0; }
	case $mode in
	daemon)
		daemon_wait_traced "$W_NP" || { record_fail "$w" "$mode" "$rep"; return 0; }
		;;
	default | mpi-calls | heap)
		if [ "$W_MPI" = 1 ]; then
			target=(--job "$(ppid_of "${READY_PIDS[0]}")")	# mpirun
		else
			target=(--pid "${READY_PIDS[0]}")
		fi
		# shellcheck disable=SC2086
		start_memattr "${target[@]}" ${MODE_FLAG[$mode]}
		wait_memattr_ready 120 || { record_fail "$w" "$mode" "$rep"; return 0; }
		sleep 0.2
		probe_fds=$(count_probe_fds "$TOOL_PID")
		;;
	memleak)
		start_memleak || { record_fail "$w" "$mode" "$rep"; return 0; }
		;;
	esac
	touch "$RD/go"
	if ! wait_gone "$JOB_PID" 600; then
		RUN_ERR="job still running after 600 s"
		record_fail "$w" "$mode" "$rep"
		return 0
	fi
	case $mode in
	daemon)
		daemon_stop "$W_NP" || { record_fail "$w" "$mode" "$rep"; return 0; }
		;;
	default | mpi-calls | heap)
		stop_memattr
		local ev dr tt
		ev=$(sed -n 's/^events: \([0-9]*\).*/\1/p' "$RD/tool.out")
		dr=$(sed -n 's/.*dropped: \([0-9]*\).*/\1/p' "$RD/tool.out")
		tt=$(tr ' ' '\t' <"$RD/tool.time" 2>/dev/null | tail -1)
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$w" "$mode" "$rep" "${ev:-?}" "${dr:-?}" "${tt:-?}" "$probe_fds" >>"$RES/toolruns.tsv"
		local nt
		nt=$(sed -n 's/^memattr-bpf: \([0-9]*\) process.* traced.*/\1/p' "$RD/tool.out")
		if [ "${nt:-0}" -lt "$W_NP" ]; then
			RUN_ERR="memattr-bpf traced ${nt:-0} of $W_NP processes (see $RD/tool.out)"
			record_fail "$w" "$mode" "$rep"
			return 0
		fi
		;;
	memleak)
		local p
		for p in "${BT_PIDS[@]}"; do stop_pid "$p" 30; done
		;;
	esac
	if ! grep -q '^RESULT ' "$RD/job.out"; then
		RUN_ERR="no RESULT line; job output: $(tail -3 "$RD/job.out" | tr '\n' ' ')"
		record_fail "$w" "$mode" "$rep"
		status=failed
	else
		awk -v w="$w" -v m="$mode" -v r="$rep" '$1 == "RESULT" { printf "%s\t%s\t%s\t%s\t%s\t%s\n", w, $2, m, r, $3, $4 }' \
			"$RD/job.out" >>"$RES/overhead.tsv"
	fi
	if [ "$rep" = 1 ]; then
		printf '%s\t%s\t%s\t%s%s\n' "$w" "$mode" "$status" "$JOB_CMD" "${TOOL_CMD:+   ||   $TOOL_CMD}" >>"$RES/commands.tsv"
	fi
	log "  $w $mode rep $rep: $(awk '$1 == "RESULT" { printf "%s=%s %s  ", $2, $3, $4 }' "$RD/job.out") ($(seconds_since "$t0") s)"
	# Big per-run files are not needed once the figure is recorded.
	rm -f "$RD"/heaptrack.* "$RD"/massif.* 2>/dev/null || true
}

reps_of() {
	case $1 in
	untraced | default | mpi-calls | heap | daemon) echo "$REPS_CORE" ;;
	massif) echo "$REPS_MASSIF" ;;
	*) echo "$REPS_PEER" ;;
	esac
}

applies() {	# applies WORKLOAD MODE
	case $2 in
	mpi-calls | heap) [ -n "${MODE_PRESENT[$2]:-}" ] || return 1 ;;
	esac
	[ "$2" = memnesia ] && [ "$1" = malloc ] && return 1	# no MPI calls to wrap
	return 0
}

section_overhead() {
	local w rep mode modes n i k maxrep
	for w in $WORKLOADS; do
		modes=()
		for mode in $MODES; do applies "$w" "$mode" && modes+=("$mode"); done
		maxrep=$REPS_CORE
		log "overhead: $w (${modes[*]})"
		# One untraced run first, not recorded: page cache, Open MPI's first start.
		run_one "$w" untraced 0 >/dev/null
		sed -i "/\t0\t[^\t]*\t[^\t]*$/{/^$w\t[^\t]*\tuntraced\t0\t/d}" "$RES/overhead.tsv"
		for ((rep = 1; rep <= maxrep; rep++)); do
			n=${#modes[@]}
			for ((i = 0; i < n; i++)); do
				k=$(((i + rep - 1) % n))	# rotate the order every repetition
				mode=${modes[k]}
				[ "$rep" -le "$(reps_of "$mode")" ] || continue
				RUN_TRAPPED=0
				run_one "$w" "$mode" "$rep"
				if [ "$RUN_TRAPPED" = 1 ]; then
					log "  retrying $w $mode rep $rep once"
					run_one "$w" "$mode" "$rep"
				fi
			done
		done
	done
}

# ---------------------------------------------------------------- tool cost
section_footprint() {
	local n
	printf 'ranks\tstartup_s\twindow_s\tcpu_pct\tvmrss_kb\tvmhwm_kb\tmap_memlock\tprog_memlock\tnprogs\ttool_elapsed_s\ttool_user_s\ttool_sys_s\ttool_maxrss_kb\tevents\tdropped\tbpf_mapped_kb\n' >"$RES/footprint.tsv"
	for n in $FOOT_RANKS; do
		log "footprint: $n ranks of hold ($HOLD_MIB MiB each)"
		TRACK_MARK=${#TRACKED[@]}
		RUN_ERR=""
		workload_setup hold
		new_run_dir "footprint.$n"
		WRAP=() MPIOPTS=()
		launch_job "$n" --ready-dir "$RD/ready" --stop-file "$RD/stop"
		wait_ready "$n" 600 || { record_fail footprint "$n" 1; continue; }
		start_memattr --job "$(ppid_of "${READY_PIDS[0]}")"
		wait_memattr_ready 300 || { record_fail footprint "$n" 1; continue; }
		echo "$JOB_CMD   ||   $TOOL_CMD" >"$RES/footprint.$n.cmd"
		"$PY" "$BENCH_DIR/procmon.py" tool "$TOOL_PID" --settle "$FOOT_SETTLE" \
			--window "$FOOT_WINDOW" --out "$RES/footprint.$n.json"
		touch "$RD/stop"
		wait_gone "$JOB_PID" 300 || { RUN_ERR="hold job did not stop"; record_fail footprint "$n" 1; continue; }
		stop_memattr
		"$PY" - "$RES/footprint.$n.json" "$n" "$TOOL_STARTUP_S" "$RD/tool.time" "$RD/tool.out" >>"$RES/footprint.tsv" <<'PYEOF'
import json, re, sys
j = json.load(open(sys.argv[1]))
tt = (open(sys.argv[4]).read().split("\n")[-2].split() + ["?"] * 4)[:4]
out = open(sys.argv[5]).read()
m = re.search(r"^events: (\d+).*dropped: (\d+)", out, re.M)
ev, dr = (m.group(1), m.group(2)) if m else ("?", "?")
print("\t".join(str(x) for x in [sys.argv[2], sys.argv[3], f"{j['window_s']:.2f}", f"{j['cpu_pct']:.2f}",
      j["vmrss_kb"], j["vmhwm_kb"], j["map_memlock"], j["prog_memlock"], j["nprogs"], *tt, ev, dr,
      j.get("bpf_mapped_kb", 0)]))
PYEOF
		log "  $(tail -1 "$RES/footprint.tsv")"
	done
}

# Events per second the tool absorbs: a page-touching storm at rising rates,
# then several storming processes at once (more producers than the node has
# cores: the tool must keep up while competing for CPU).
storm_pages() {	# total pages and the longest duration over the INFO lines
	awk '$1 == "INFO" && $2 == "pages" { p += $3; if ($5 > s) s = $5 } END { printf "%d %s\n", p, s }' "$1"
}

section_storm() {
	local step procs rate stall pages secs ev dr tt upages usecs pids r
	printf 'procs\tstall_s\ttarget_pages_per_s\tuntraced_pages_per_s\tpages_per_s\tseconds\tevents\tdropped\tevents_per_s\ttool_user_s\ttool_sys_s\n' >"$RES/storm.tsv"
	for step in $STORM_STEPS; do
		IFS=: read -r procs rate stall <<<"$step"
		TRACK_MARK=${#TRACKED[@]}
		RUN_ERR=""
		workload_setup storm
		W_ARGS=(--rate "$rate" --seconds "$STORM_SECONDS" --mib 64 --n "$procs")
		WRAP=() MPIOPTS=()
		# Untraced reference for the same step.
		new_run_dir "storm.$procs.$rate.${stall:-0}.untraced"
		launch_job 1 --ready-dir "$RD/ready" --go-file "$RD/go"
		wait_ready "$procs" 60 || { record_fail storm "$step" 1; continue; }
		touch "$RD/go"
		wait_gone "$JOB_PID" 120 || true
		read -r upages usecs < <(storm_pages "$RD/job.out")
		# Traced: every storming process by pid.
		new_run_dir "storm.$procs.$rate.${stall:-0}"
		launch_job 1 --ready-dir "$RD/ready" --go-file "$RD/go"
		wait_ready "$procs" 60 || { record_fail storm "$step" 1; continue; }
		pids=${READY_PIDS[0]}
		for ((r = 1; r < procs; r++)); do pids+=",${READY_PIDS[r]}"; done
		start_memattr --pid "$pids"
		wait_memattr_ready 120 || { record_fail storm "$step" 1; continue; }
		echo "$JOB_CMD   ||   $TOOL_CMD" >"$RES/storm.$procs.$rate.${stall:-0}.cmd"
		touch "$RD/go"
		if [ -n "$stall" ] && [ -n "$TOOL_PID" ]; then
			# A consumer that falls behind: the tool stopped for $stall s mid-storm.
			sleep 0.5
			kill -STOP "$TOOL_PID"
			sleep "$stall"
			kill -CONT "$TOOL_PID"
		fi
		wait_gone "$JOB_PID" 120 || { RUN_ERR="storm did not end"; record_fail storm "$step" 1; continue; }
		stop_memattr
		read -r pages secs < <(storm_pages "$RD/job.out")
		ev=$(sed -n 's/^events: \([0-9]*\).*/\1/p' "$RD/tool.out")
		dr=$(sed -n 's/.*dropped: \([0-9]*\).*/\1/p' "$RD/tool.out")
		tt=$(awk 'END {print $2 "\t" $3}' "$RD/tool.time")
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$procs" "${stall:-0}" "$rate" \
			"$(awk -v p="$upages" -v s="$usecs" 'BEGIN {printf "%.0f", p / s}')" \
			"$(awk -v p="$pages" -v s="$secs" 'BEGIN {printf "%.0f", p / s}')" "$secs" "${ev:-?}" "${dr:-?}" \
			"$(awk -v e="${ev:-0}" -v s="$secs" 'BEGIN {printf "%.0f", e / s}')" "$tt" >>"$RES/storm.tsv"
		log "  storm $procs x target $rate: $(tail -1 "$RES/storm.tsv")"
	done
}

# Neighbour: what a running memattr-bpf costs a process it does NOT trace
# (another user's job on the node): the storm workload alone, then beside a
# tool that traces an unrelated idle process, alternating.
section_neighbour() {
	local r upages usecs pages secs sleeper
	printf 'rep\talone_pages_per_s\tbeside_pages_per_s\n' >"$RES/neighbour.tsv"
	for ((r = 0; r < REPS_CORE; r++)); do
		TRACK_MARK=${#TRACKED[@]}
		RUN_ERR=""
		workload_setup storm
		W_ARGS=(--rate 0 --seconds "$STORM_SECONDS" --mib 64 --n 1)
		WRAP=() MPIOPTS=()
		new_run_dir "neighbour.$r.alone"
		launch_job 1 --ready-dir "$RD/ready" --go-file "$RD/go"
		wait_ready 1 60 || { record_fail neighbour alone "$r"; continue; }
		touch "$RD/go"
		wait_gone "$JOB_PID" 120 || true
		read -r upages usecs < <(storm_pages "$RD/job.out")
		new_run_dir "neighbour.$r.beside"
		sleep 600 &
		sleeper=$!
		track_pid "$sleeper"
		start_memattr --pid "$sleeper"
		if ! wait_memattr_ready 120; then
			kill "$sleeper"
			record_fail neighbour beside "$r"
			continue
		fi
		launch_job 1 --ready-dir "$RD/ready" --go-file "$RD/go"
		wait_ready 1 60 || { kill "$sleeper"; record_fail neighbour beside "$r"; continue; }
		echo "$JOB_CMD   ||   beside it: $TOOL_CMD" >"$RES/neighbour.cmd"
		touch "$RD/go"
		wait_gone "$JOB_PID" 120 || true
		# The traced process ends, so the tool exits by itself.
		kill "$sleeper"
		wait "$sleeper" 2>/dev/null || true
		stop_memattr
		read -r pages secs < <(storm_pages "$RD/job.out")
		printf '%s\t%s\t%s\n' "$r" \
			"$(awk -v p="$upages" -v s="$usecs" 'BEGIN {printf "%.0f", p / s}')" \
			"$(awk -v p="$pages" -v s="$secs" 'BEGIN {printf "%.0f", p / s}')" >>"$RES/neighbour.tsv"
		log "  neighbour rep $r: $(tail -1 "$RES/neighbour.tsv")"
	done
}

# Accuracy: the tool's per-rank peaks against the kernel's, sampled from /proc.
section_accuracy() {
	local w args r mon
	printf 'workload\tok\n' >"$RES/accuracy.tsv"
	for w in miniapp alltoall hold8; do
		TRACK_MARK=${#TRACKED[@]}
		RUN_ERR=""
		if [ "$w" = hold8 ]; then
			workload_setup hold
			new_run_dir "accuracy.$w"
			WRAP=() MPIOPTS=()
			launch_job 8 --ready-dir "$RD/ready" --stop-file "$RD/stop"
			wait_ready 8 300 || { record_fail accuracy "$w" 1; continue; }
		else
			workload_setup "$w"
			new_run_dir "accuracy.$w"
			WRAP=() MPIOPTS=()
			launch_job 2 --ready-dir "$RD/ready" --go-file "$RD/go"
			wait_ready 2 120 || { record_fail accuracy "$w" 1; continue; }
		fi
		log "accuracy: $w"
		start_memattr --job "$(ppid_of "${READY_PIDS[0]}")"
		wait_memattr_ready 120 || { record_fail accuracy "$w" 1; continue; }
		args=()
		for r in "${!READY_PIDS[@]}"; do args+=("${READY_PIDS[r]}:$r"); done
		"$PY" "$BENCH_DIR/procmon.py" ranks --out "$RES/accuracy.$w.kernel.json" --interval-ms 20 "${args[@]}" &
		mon=$!
		track_pid "$mon"
		if [ "$w" = hold8 ]; then
			sleep 3
			touch "$RD/stop"
		else
			touch "$RD/go"
		fi
		wait_gone "$JOB_PID" 300 || { RUN_ERR="job did not end"; record_fail accuracy "$w" 1; continue; }
		stop_memattr
		stop_pid "$mon" 10
		cp "$RD/out/summary.csv" "$RES/accuracy.$w.summary.csv" 2>/dev/null || true
		echo "$JOB_CMD   ||   $TOOL_CMD" >"$RES/accuracy.$w.cmd"
		printf '%s\t1\n' "$w" >>"$RES/accuracy.tsv"
	done
}

# shellcheck source=costs.sh
source "$BENCH_DIR/costs.sh"
# shellcheck source=daemon_mode.sh
source "$BENCH_DIR/daemon_mode.sh"

for s in $SECTIONS; do
	case $s in
	overhead) section_overhead ;;
	footprint) section_footprint ;;
	storm) section_storm ;;
	neighbour) section_neighbour ;;
	costs) section_costs ;;
	accuracy) section_accuracy ;;
	*) die "unknown section $s" ;;
	esac
done

# No tracer of ours may outlive the run (it would keep probing the node).
if any_tracked_running; then
	log "stopping leftover processes of this run"
	signal_tracked INT
	sleep 2
fi

DURATION=$(seconds_since "$T_START")
echo "duration_s=$DURATION" >>"$RES/meta.txt"
if [ -n "${BENCH_REPORT:-}" ]; then
	REPORT=$BENCH_REPORT
elif [ "$QUICK" = 1 ]; then
	REPORT=$SCR/BENCHMARKS.md
else
	REPORT=$REPO/BENCHMARKS.md
fi
"$PY" "$BENCH_DIR/report.py" "$RES" "$REPORT"
if [ "$REPORT" = "$REPO/BENCHMARKS.md" ]; then
	# The raw figures behind the report, kept next to the scripts.
	rm -rf "$BENCH_DIR/results"
	cp -r "$RES" "$BENCH_DIR/results"
	RES=$BENCH_DIR/results
fi
log "done in ${DURATION}s; report: $REPORT; raw results: $RES"
