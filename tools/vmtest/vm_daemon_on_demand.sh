#!/bin/bash
# Inside a VM of the kernel matrix: the node service attaches its node-wide
# programs only while it traces a process (test_daemon_on_demand.sh on the
# host, without its attribution check): idle, no syscall tracepoint is held
# by it; a job (the test user's sleep, with a job ID) brings them; some
# seconds after its end (--detach-after 3) they are gone; nothing is left
# after the daemon stops. Waits are long: the VM emulates its CPU.
# The matrix's kernels (Debian's 6.1 and 6.12, x86-64) allow fentry: the
# memory calls must go through it (the start line says so, the job brings
# their 22 fentry/fexit links) and no syscall tracepoint is registered at
# any time (VM_SYSCALL_HOOKS=tracepoints: the other way round, for a kernel
# that refuses fentry). Checked to fail on 6.12 with the memory calls kept
# on the tracepoints (MEMATTR_SYSCALL_HOOKS=tracepoints alone): the start
# line names the tracepoints.
source "$(dirname "$0")/../../tests/integration/lib.sh"
source "$(dirname "$0")/daemon_hooks.sh"

it_setup
ERR=$TMPD/daemon.err

"$MEMATTR_BIN" daemon --spool "$TMPD/spool" --listen none --socket none --detach-after 3 2>"$ERR" &
DAEMON_PID=$!
track_pid "$DAEMON_PID"
until_line '^memattr-bpf: daemon: watching' 300
HOOKS=${VM_SYSCALL_HOOKS:-fentry}
line=$(grep '^memattr-bpf: daemon: watching' "$ERR")
case $HOOKS in
fentry) [[ $line == *"memory calls through fentry/fexit on __x64_sys_*"* ]] ||
	fail "the memory calls do not go through fentry on this kernel: $line" ;;
*) [[ $line == *"memory calls through syscall tracepoints ("* ]] ||
	fail "the memory calls do not go through the syscall tracepoints: $line" ;;
esac
log "start line: ...${line##*attribution }"
sleep 2
n=$(daemon_hooks)
[ "$n" = "0 0" ] || fail "the idle daemon holds syscall tracepoints and fentry links: $n"
log "idle: no syscall tracepoint, no fentry link"
sleep_job 15
n=$(daemon_hooks)
case $HOOKS in
fentry) [ "$n" = "0 22" ] || fail "job $JOB traced: $n syscall tracepoints and fentry links, not 0 and 22" ;;
*) [ "$n" = "22 0" ] || fail "job $JOB traced: $n syscall tracepoints and fentry links, not 22 and 0" ;;
esac
# Nobody's: the kernel has no syscall tracepoint registered (every syscall of the VM on its fast path).
all=$(bpftool -j perf show | "$PY" -c 'import json, sys
print(sum(1 for e in json.load(sys.stdin)
          if e.get("fd_type") == "tracepoint" and e.get("tracepoint", "").startswith("sys_")))')
[ "$HOOKS" != fentry ] || [ "$all" = 0 ] || fail "bpftool perf show lists $all syscall tracepoints: $(bpftool perf show)"
log "job $JOB traced: the daemon's syscall tracepoints and fentry/fexit links: $n; anyone's syscall tracepoints: $all"
wait "$J" || true
until_line "job $JOB.*ended" 120
until_detached 60
log "detached $DETACHED_AFTER s after the job's end (hold 3 s)"
kill -TERM "$DAEMON_PID"
wait_exit "$DAEMON_PID" 120 || fail "the daemon did not stop"
check_no_bpf_leftovers
pass
