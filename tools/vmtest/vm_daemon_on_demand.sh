#!/bin/bash
# Inside a VM of the kernel matrix: the node service attaches its node-wide
# programs only while it traces a process (test_daemon_on_demand.sh on the
# host, without its attribution check): idle, no syscall tracepoint is held
# by it; a job (the test user's sleep, with a job ID) brings them; some
# seconds after its end (--detach-after 3) they are gone; nothing is left
# after the daemon stops. Waits are long: the VM emulates its CPU.
source "$(dirname "$0")/../../tests/integration/lib.sh"

it_setup
ERR=$TMPD/daemon.err
# until_line REGEX TIMEOUT
until_line() {
	local t0=$EPOCHREALTIME
	until grep -q "$1" "$ERR"; do
		pid_running "$DAEMON_PID" || fail "the daemon exited: $(tail -5 "$ERR")"
		elapsed_since "$t0" "$2" && fail "no line '$1' after $2 s: $(tail -5 "$ERR")"
		sleep 0.2
	done
}

"$MEMATTR_BIN" daemon --spool "$TMPD/spool" --listen none --socket none --detach-after 3 2>"$ERR" &
DAEMON_PID=$!
track_pid "$DAEMON_PID"
until_line '^memattr-bpf: daemon: watching' 300
sleep 2
n=$(syscall_tps "$DAEMON_PID")
[ "$n" = 0 ] || fail "the idle daemon holds $n syscall tracepoints"
log "idle: no syscall tracepoint"
JOB=$((500000 + RANDOM))
as_user SLURM_JOB_ID="$JOB" sleep 15 &
J=$!
track_pid "$J"
until_line "job $JOB of " 120
n=$(syscall_tps "$DAEMON_PID")
[ "$n" -gt 0 ] || fail "job $JOB traced, yet no syscall tracepoint"
log "job $JOB traced: $n syscall tracepoints"
wait "$J" || true
until_line "job $JOB.*ended" 120
t0=$EPOCHREALTIME
until [ "$(syscall_tps "$DAEMON_PID")" = 0 ]; do
	elapsed_since "$t0" 60 && fail "syscall tracepoints still held 60 s after the job ended"
	sleep 0.5
done
log "detached $(seconds_since "$t0") s after the job's end (hold 3 s)"
kill -TERM "$DAEMON_PID"
wait_exit "$DAEMON_PID" 120 || fail "the daemon did not stop"
check_no_bpf_leftovers
pass
