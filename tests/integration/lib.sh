# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Shared helpers of the integration tests; source it, then call it_setup.
#
# The tests run memattr-bpf as root against Open MPI jobs launched by an
# unprivileged user (memattr-test), because that is the path real users take:
# the job belongs to someone else than the tracer. Everything a test starts
# is recorded (pid + start time) and only that is killed on exit: this
# machine may run other people's jobs and tracers, so nothing is ever killed
# by name.

set -euo pipefail

IT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$IT_DIR/../.." && pwd)
MEMATTR_BIN=${MEMATTR_BIN:-$REPO/memattr-bpf}
WORKLOAD_SRC_BIN=${WORKLOAD_BIN:-$REPO/tests/workloads/bin}
TEST_USER=${MEMATTR_TEST_USER:-memattr-test}
TEST_NAME=${IT_TEST_NAME:-$(basename "$0" .sh)}	# a wrapper running another test under another MPI names itself
# Which MPI the test's jobs use: openmpi (the default) or mpich. A test sets
# IT_MPI=mpich before sourcing this file; start_job, wait_ranks and
# rank_of_pid follow it. The launchers are named explicitly: plain mpirun is
# whatever Debian's alternatives point at (Open MPI here), and a workload
# built for one MPI cannot run under the other's launcher (bin/PROG is the
# Open MPI build, bin/PROG.mpich the MPICH one: MPI_SUFFIX).
IT_MPI=${IT_MPI:-openmpi}
case $IT_MPI in
openmpi) IT_MPIRUN=(mpirun --oversubscribe) MPIRUN_COMM=mpirun RANK_VAR=OMPI_COMM_WORLD_RANK MPI_SUFFIX="" ;;
mpich) IT_MPIRUN=(mpirun.mpich) MPIRUN_COMM=mpirun.mpich RANK_VAR=PMI_RANK MPI_SUFFIX=.mpich ;;
*) echo "lib.sh: IT_MPI=$IT_MPI: must be openmpi or mpich" >&2; exit 1 ;;
esac
# Debian's python3: the checkers need nothing beyond the standard library,
# and a pyenv shim in root's PATH may not exist on a fresh machine.
if [ -x /usr/bin/python3 ]; then PY=/usr/bin/python3; else PY=python3; fi

TRACKED=()       # "pid:starttime" of everything this test started
TMPD=""
SAMPLER_PID=""

log() { printf '[%s %s] %s\n' "$TEST_NAME" "$(date +%T.%3N)" "$*"; }

# Print a clear failure line and leave; the EXIT trap cleans up.
fail() {
	printf 'FAIL: %s: %s\n' "$TEST_NAME" "$*"
	exit 1
}

# assert "what must hold" command args...: fails the test with the message.
assert() {
	local what=$1
	shift
	"$@" || fail "$what"
}

assert_eq() {	# actual expected what
	[ "$1" = "$2" ] || fail "$3: expected '$2', got '$1'"
}

pass() {
	log "PASS"
	exit 0
}

# CLOCK_MONOTONIC seconds: the clock the workloads log with.
# free_port: a loopback port for a server a test starts. It lies below the
# kernel's ephemeral range, so no client connection of anyone's can take it
# between this choice and the server's bind (an ephemeral choice, or a port
# merely found not listening, failed CI with EADDRINUSE); and a bind without
# SO_REUSEADDR proves no socket at all holds it now, TIME_WAIT included.
free_port() {
	"$PY" - <<'EOP' || fail "no free loopback port below the ephemeral range"
import random, socket, sys
low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
if low <= 10100:
    sys.exit("ephemeral ports start at %d: no room below them" % low)
for _ in range(200):
    port = random.randrange(10000, low)
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
    except OSError:
        continue
    finally:
        s.close()
    print(port)
    sys.exit(0)
sys.exit("200 ports below %d all taken" % low)
EOP
}

mono_now() { "$PY" -c 'import time; print(f"{time.monotonic():.6f}")'; }

# shellcheck source=../../tools/lib/pidtrack.sh
source "$REPO/tools/lib/pidtrack.sh"

it_cleanup() {
	local rc=$?
	set +e
	if [ ${#TRACKED[@]} -gt 0 ] && any_tracked_running; then
		signal_tracked TERM
		for _ in $(seq 40); do any_tracked_running || break; sleep 0.05; done
		any_tracked_running && signal_tracked KILL
	fi
	if [ -n "$TMPD" ] && [ -d "$TMPD" ]; then
		if [ "$rc" -eq 0 ] && [ -z "${KEEP_TMP:-}" ]; then
			rm -rf "$TMPD"
		else
			echo "[$TEST_NAME] kept $TMPD for inspection"
		fi
	fi
	exit "$rc"
}

ensure_test_user() {
	if ! id -u "$TEST_USER" >/dev/null 2>&1; then
		useradd -m -s /bin/bash "$TEST_USER" 2>/dev/null ||
			id -u "$TEST_USER" >/dev/null 2>&1 ||	# a concurrent test made it
			fail "cannot create user $TEST_USER"
	fi
	TEST_HOME=$(getent passwd "$TEST_USER" | cut -d: -f6)
	if [ ! -d "$TEST_HOME" ]; then
		TEST_HOME=$TMPD/home
		install -d -o "$TEST_USER" -g "$(id -g "$TEST_USER")" "$TEST_HOME"
	fi
	AS_USER=(runuser -u "$TEST_USER" -- env -i PATH=/usr/local/bin:/usr/bin:/bin
		HOME="$TEST_HOME" USER="$TEST_USER" LOGNAME="$TEST_USER")
}

# Common start of every test: root, binaries present, scratch dir, user.
it_setup() {
	[ "$(id -u)" -eq 0 ] || fail "must run as root (it loads BPF programs)"
	[ -x "$MEMATTR_BIN" ] || fail "no tool binary at $MEMATTR_BIN (run make)"
	local w
	for w in mpi_phases mpi_hold mpi_truth mpi_dlopen mpi_child mpi_cxx mpi_ftn libtruth.so libplugin.so libcxxtruth.so; do
		if [ ! -x "$WORKLOAD_SRC_BIN/$w" ]; then
			make -s -C "$REPO/tests/workloads" >/dev/null || fail "cannot build the workloads"
			break
		fi
	done
	# This MPI's builds (bin/PROG.mpich for MPICH).
	[ -x "$WORKLOAD_SRC_BIN/mpi_truth$MPI_SUFFIX" ] || make -s -C "$REPO/tests/workloads" >/dev/null
	[ -x "$WORKLOAD_SRC_BIN/mpi_truth$MPI_SUFFIX" ] ||
		fail "no $IT_MPI build of the workloads (bin/mpi_truth$MPI_SUFFIX): is its compiler installed? (tools/install-deps.sh)"
	trap it_cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	TMPD=$(mktemp -d "/tmp/memattr-it.$TEST_NAME.XXXXXX")
	# Sticky and world-writable, as /tmp: a sudo run's --output is made with the
	# test user's rights (output_dir.h), as in a user's own directory.
	chmod 1777 "$TMPD"
	ensure_test_user
	# The repo may sit where the test user cannot reach (e.g. under /root):
	# give the job its own copies of the workloads.
	mkdir -p "$TMPD/bin"
	cp "$WORKLOAD_SRC_BIN"/mpi_* "$WORKLOAD_SRC_BIN"/lib*.so "$TMPD/bin/"
	chmod 755 "$TMPD/bin" "$TMPD/bin/"*
	LOGS=$TMPD/logs
	install -d -o "$TEST_USER" -g "$(id -g "$TEST_USER")" "$LOGS"
	JOB_OUT=$TMPD/job.out	# mpirun's stdout and stderr
	GO_FILE=$LOGS/go
	STOP_FILE=$LOGS/stop
	log "scratch dir $TMPD"
}

# Run a command as the test user with a clean environment (root's may carry
# OMPI_ALLOW_RUN_AS_ROOT or a PATH the user cannot read).
# AS_USER is the same prefix as an array, for commands run under timeout.
as_user() {
	"${AS_USER[@]}" "$@"
}

# no_sigpipe CMD...: exec CMD with SIGPIPE ignored. In a subshell only:
# `(no_sigpipe CMD) || ...`, or `no_sigpipe CMD &` ($! is CMD's pid).
# The tests start their MPI launchers so (start_job, launch_under_tool:
# directly, or through the tool, which gives its command SIGPIPE as its
# caller left it; the tests that name mpirun themselves do the same).
# Open MPI 4.1's mpirun takes SIGPIPE in a handler while the job runs and
# gives it back to the default in its finalize, where a last write to a
# rank's closed PMIx socket can then kill it: exit 141 after a job that
# ended well (openpmix/openpmix#1863; seen once here, vm_truth on 6.12).
# Ignored, that write fails with EPIPE, which mpirun handles; an ignored
# signal stays so across exec. No process is added to the chain: a
# wrapper (env) would be traced and sampled as the launched command.
no_sigpipe() {
	trap '' PIPE
	exec "$@"
}

# find_descendant PID COMM TIMEOUT: the first process named COMM below PID.
# Background functions run in a subshell and runuser forks what it runs, so
# the process we want sits a few levels below $!.
find_descendant() {
	local pid=$1 comm=$2 timeout=$3 t0=$EPOCHREALTIME c
	while :; do
		for c in $(descendants "$pid"); do
			if [ "$(cat "/proc/$c/comm" 2>/dev/null)" = "$comm" ]; then
				echo "$c"
				return 0
			fi
		done
		pid_running "$pid" || return 1
		elapsed_since "$t0" "$timeout" && return 1
		sleep 0.02
	done
}

# elapsed_since T0 LIMIT: true once LIMIT seconds have passed since T0
# ($EPOCHREALTIME).
elapsed_since() {
	awk -v a="$1" -v b="$EPOCHREALTIME" -v l="$2" 'BEGIN { exit !(b - a >= l) }'
}

seconds_since() {
	awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }'
}

# start_job NP [mpirun options...] -- PROGRAM ARGS...
# Launches mpirun as the test user in the background. Sets JOB_PID (runuser,
# whose exit status is mpirun's) and MPIRUN_PID.
start_job() {
	local np=$1
	shift
	local opts=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		opts+=("$1")
		shift
	done
	shift
	log "launching as $TEST_USER: ${IT_MPIRUN[*]} -np $np ${opts[*]} $*"
	no_sigpipe "${AS_USER[@]}" "${IT_MPIRUN[@]}" -np "$np" "${opts[@]}" "$@" >"$JOB_OUT" 2>&1 &
	JOB_PID=$!
	track_pid "$JOB_PID"
	MPIRUN_PID=$(find_descendant "$JOB_PID" "$MPIRUN_COMM" 10) || fail "$MPIRUN_COMM did not start: $(cat "$JOB_OUT")"
	track_pid "$MPIRUN_PID"
	log "mpirun pid $MPIRUN_PID"
}

rank_of_pid() {
	tr '\0' '\n' <"/proc/$1/environ" 2>/dev/null | sed -n "s/^$RANK_VAR=//p"
}

# Where the ranks sit: mpirun's children (Open MPI), or the children of
# hydra's proxy (hydra_pmi_proxy), itself mpiexec's child (MPICH).
rank_candidates() {
	local c
	for c in $(cat /proc/"$MPIRUN_PID"/task/*/children 2>/dev/null); do
		if [ "$IT_MPI" = mpich ]; then
			cat /proc/"$c"/task/*/children 2>/dev/null
		else
			echo "$c"
		fi
	done
}

# wait_ranks NP TIMEOUT: fills RANK_PID[rank] from mpirun's children.
wait_ranks() {
	local np=$1 timeout=$2 t0=$EPOCHREALTIME c r
	declare -gA RANK_PID=()
	while [ ${#RANK_PID[@]} -lt "$np" ]; do
		for c in $(rank_candidates); do
			r=$(rank_of_pid "$c")
			if [ -n "$r" ] && [ -z "${RANK_PID[$r]:-}" ]; then
				RANK_PID[$r]=$c
				track_pid "$c"
			fi
		done
		[ ${#RANK_PID[@]} -ge "$np" ] && break
		pid_running "$MPIRUN_PID" || fail "mpirun exited before $np ranks appeared: $(cat "$JOB_OUT")"
		elapsed_since "$t0" "$timeout" && fail "only ${#RANK_PID[@]} of $np ranks after ${timeout}s"
		sleep 0.05
	done
	local r2 desc=""
	for r2 in $(seq 0 $((np - 1))); do
		[ -n "${RANK_PID[$r2]:-}" ] || fail "rank $r2 missing among mpirun's children"
		desc+=" $r2:${RANK_PID[$r2]}"
	done
	log "ranks (rank:pid):$desc"
}

# wait_events PREFIX EVENT NP TIMEOUT: every rank logged EVENT in
# $LOGS/PREFIX-rank-R.csv (e.g. "ready" once MPI_Init returned).
wait_events() {
	local prefix=$1 ev=$2 np=$3 timeout=$4 t0=$EPOCHREALTIME r n
	while :; do
		n=0
		for r in $(seq 0 $((np - 1))); do
			grep -q "^$ev," "$LOGS/$prefix-rank-$r.csv" 2>/dev/null && n=$((n + 1))
		done
		[ "$n" -eq "$np" ] && return 0
		pid_running "$MPIRUN_PID" || fail "job ended before all ranks logged '$ev': $(cat "$JOB_OUT")"
		elapsed_since "$t0" "$timeout" && fail "only $n of $np ranks logged '$ev' after ${timeout}s"
		sleep 0.05
	done
}

# start_tool ARGS...: memattr-bpf as root in the background; TOOL_PID,
# TOOL_ERR, TOOL_START. SIGINT is reset to default: bash ignores it in
# background commands, and the signal test must see what Ctrl-C does.
start_tool() {
	TOOL_ERR=$TMPD/tool.err.$RANDOM
	log "starting: memattr-bpf $*"
	TOOL_START=$EPOCHREALTIME
	env --default-signal=INT,QUIT "$MEMATTR_BIN" "$@" >"$TMPD/tool.out" 2>"$TOOL_ERR" &
	TOOL_PID=$!
	track_pid "$TOOL_PID"
}

# wait_tool_ready TIMEOUT: the "memattr-bpf: tracing" line; sets T_LINE
# (CLOCK_MONOTONIC) and TOOL_READY ($EPOCHREALTIME).
wait_tool_ready() {
	local timeout=$1
	while ! grep -q '^memattr-bpf: tracing' "$TOOL_ERR"; do
		if ! pid_running "$TOOL_PID"; then
			local rc=0
			wait "$TOOL_PID" || rc=$?
			fail "tool exited (status $rc) before tracing; stderr: $(cat "$TOOL_ERR")"
		fi
		elapsed_since "$TOOL_START" "$timeout" && fail "no 'memattr-bpf: tracing' line after ${timeout}s; stderr: $(cat "$TOOL_ERR")"
		sleep 0.02
	done
	TOOL_READY=$EPOCHREALTIME
	T_LINE=$(mono_now)
	log "tool ready after $(seconds_since "$TOOL_START")s: $(grep '^memattr-bpf: tracing' "$TOOL_ERR" | head -1)"
}

# wait_exit PID TIMEOUT: waits for a child of this shell; WAIT_RC gets its
# exit status, EXITED_AT when it was seen gone ($EPOCHREALTIME). Returns 1
# on timeout (the process keeps running).
wait_exit() {
	local pid=$1 timeout=$2 t0=$EPOCHREALTIME
	while pid_running "$pid"; do
		elapsed_since "$t0" "$timeout" && return 1
		sleep 0.05
	done
	EXITED_AT=$EPOCHREALTIME
	WAIT_RC=0
	wait "$pid" || WAIT_RC=$?
	return 0
}

# The job must end by itself with status 0 (the workloads check their own
# memory and exit non-zero when it was corrupted).
wait_job_ok() {
	local timeout=$1
	wait_exit "$JOB_PID" "$timeout" || fail "MPI job still running ${timeout}s later"
	[ "$WAIT_RC" -eq 0 ] || fail "MPI job exited with status $WAIT_RC: $(tail -20 "$JOB_OUT")"
	log "MPI job exited 0"
}

# The tool must exit 0 within TIMEOUT seconds.
wait_tool_ok() {
	local timeout=$1 why=$2
	wait_exit "$TOOL_PID" "$timeout" || fail "tool still running ${timeout}s after $why"
	[ "$WAIT_RC" -eq 0 ] || fail "tool exited with status $WAIT_RC after $why; stderr: $(cat "$TOOL_ERR")"
	log "tool exited 0 after $why ($(seconds_since "$TOOL_START")s after start)"
	if [ "$(wc -l <"$TOOL_ERR")" -gt 1 ]; then
		log "tool stderr (last lines):"
		tail -n 5 "$TOOL_ERR" | sed 's/^/    /'
	fi
}

# start_sampler FILE: VmRSS/VmHWM of every rank every 20 ms.
start_sampler() {
	SAMPLER_OUT=$1
	local args=() r
	for r in "${!RANK_PID[@]}"; do args+=("${RANK_PID[$r]}:$r"); done
	"$PY" "$IT_DIR/sampler.py" --out "$SAMPLER_OUT" --interval-ms 20 "${args[@]}" &
	SAMPLER_PID=$!
	track_pid "$SAMPLER_PID"
}

stop_sampler() {
	[ -n "$SAMPLER_PID" ] || return 0
	kill -TERM "$SAMPLER_PID" 2>/dev/null || true
	wait "$SAMPLER_PID" 2>/dev/null || true
	SAMPLER_PID=""
}

go() { touch "$GO_FILE"; log "go"; }

# No BPF program named ma_* may outlive the tool: such a program would keep
# tracing (and costing) every process on the node. Programs held by another
# live memattr-bpf (someone else's run on this shared machine) are reported
# but not held against this test. The kernel frees a program attached to a
# syscall tracepoint (faultable since 6.13) only after an RCU tasks-trace
# grace period, 0.03-0.3 s after the tool is gone: a leak is what is still
# there 5 s later.
check_no_bpf_leftovers() {
	wait_no_bpf_leftovers 5
}

# After SIGKILL the kernel releases the tool's programs and links when its
# descriptors close; freeing them is deferred (RCU), so allow TIMEOUT seconds
# before judging. Sets LEFTOVERS_GONE_AFTER (seconds).
wait_no_bpf_leftovers() {
	local timeout=$1 t0=$EPOCHREALTIME
	while ! "$PY" "$IT_DIR/bpf_leftovers.py" >"$TMPD/leftovers.txt" 2>&1; do
		if elapsed_since "$t0" "$timeout"; then
			cat "$TMPD/leftovers.txt"
			fail "BPF programs/links named ma_* still loaded ${timeout}s after the tool ended (above)"
		fi
		sleep 0.1
	done
	LEFTOVERS_GONE_AFTER=$(seconds_since "$t0")
	grep -v '^note:' "$TMPD/leftovers.txt" || true
}

# While the tool traces: it must hold programs named ma_*, or the leftover
# check above would pass vacuously.
check_tool_holds_bpf() {
	"$PY" "$IT_DIR/bpf_leftovers.py" --held-by "$TOOL_PID" ||
		fail "the running tool (pid $TOOL_PID) holds no BPF program named ma_*"
}

# The syscall tracepoints (the memory calls'; while any is on, every syscall
# of the node takes the slow path) that hold a BPF program of pid $1.
syscall_tps() {
	bpftool -j perf show | "$PY" -c '
import json, sys
pid = int(sys.argv[1])
print(sum(1 for e in json.load(sys.stdin)
          if e.get("pid") == pid and e.get("fd_type") == "tracepoint"
          and e.get("tracepoint", "").startswith("sys_")))' "$1"
}

# The memory calls' fentry/fexit links PID holds (ma_fe_<call>, ma_fx_<call>:
# tracing links; 22 while attached where the kernel allows fentry, 0 where
# the syscall tracepoints are used: syscall_tps counts those).
fentry_links() {
	"$PY" "$IT_DIR/bpf_leftovers.py" --count-linked-by "$1" '^ma_f[ex]_' tracing
}

# The memory calls' links PID holds, whichever way they go: its syscall
# tracepoints and its fentry/fexit links (22 while attached, either way).
memory_call_links() {
	echo $(($(syscall_tps "$1") + $(fentry_links "$1")))
}

# Which path gives user page faults' addresses: ma_fault_user at every
# fault's entry (--no-fault-frame, or no frame found), or the fault's own
# frame read by ma_rss_stat, with no program at the entry.
fault_entry_program_attached() {
	"$PY" "$IT_DIR/bpf_leftovers.py" --linked-by "$TOOL_PID" ma_fault_user >"$TMPD/fault_entry.txt" ||
		fail "the tool holds no link to ma_fault_user: $(cat "$TMPD/fault_entry.txt")"
}
fault_entry_program_absent() {
	! "$PY" "$IT_DIR/bpf_leftovers.py" --linked-by "$TOOL_PID" ma_fault_user >"$TMPD/fault_entry.txt" ||
		fail "ma_fault_user is attached: the user faults' frame was not found on this kernel ($(cat "$TMPD/fault_entry.txt"))"
}

# SUDO_ENV: the environment sudo's env_reset leaves for the tool, plus the
# SUDO_* variables naming the test user (launch mode runs CMD as that user).
set_sudo_env() {
	SUDO_ENV=(env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
		HOME=/root USER=root LOGNAME=root SUDO_USER="$TEST_USER"
		SUDO_UID="$(id -u "$TEST_USER")" SUDO_GID="$(id -g "$TEST_USER")")
}

# launch_under_tool OUT NP [TOOL_OPTION...] -- PROG ARGS...: the tool as a
# sudo user runs it, `memattr-bpf [options] --output OUT -- <this MPI's
# launcher> -np NP PROG ARGS` (the job runs as TEST_USER). Returns once the
# tool traces and the launcher runs: TOOL_PID, TOOL_ERR (TOOL_ERR_NAME
# under TMPD, tool.err by default), JOB_OUT, MPIRUN_PID.
launch_under_tool() {
	local out=$1 np=$2 opts=()
	shift 2
	while [ "$1" != "--" ]; do
		opts+=("$1")
		shift
	done
	shift
	set_sudo_env
	TOOL_ERR=$TMPD/${TOOL_ERR_NAME:-tool.err}
	JOB_OUT=$TMPD/tool.out
	log "starting: memattr-bpf ${opts[*]} --output $out -- ${IT_MPIRUN[*]} -np $np $*"
	TOOL_START=$EPOCHREALTIME
	no_sigpipe "${SUDO_ENV[@]}" "$MEMATTR_BIN" "${opts[@]}" --output "$out" -- "${IT_MPIRUN[@]}" -np "$np" \
		"$@" >"$JOB_OUT" 2>"$TOOL_ERR" &
	TOOL_PID=$!
	track_pid "$TOOL_PID"
	wait_tool_ready 30
	MPIRUN_PID=$(find_descendant "$TOOL_PID" "$MPIRUN_COMM" 15) ||
		fail "no $MPIRUN_COMM below the tool; tool stderr: $(cat "$TOOL_ERR")"
	track_pid "$MPIRUN_PID"
}

run_checker() {
	log "checking CSVs: check_csv.py $*"
	"$PY" "$IT_DIR/check_csv.py" "$@" || fail "CSV checks failed (see FAIL lines above)"
}

# wait_line_of PID FILE PATTERN WHAT: until FILE has a line matching
# PATTERN (grep -E); fails with FILE's text if PID, which writes it, ends first.
wait_line_of() {
	local pid=$1 file=$2 pat=$3 what=$4
	until grep -qE "$pat" "$file" 2>/dev/null; do
		pid_running "$pid" || fail "$what failed: $(cat "$file" 2>/dev/null)"
		sleep 0.05
	done
}
