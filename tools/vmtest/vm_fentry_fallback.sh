#!/bin/bash
# Inside a VM of the kernel matrix (whose kernels allow fentry): when the
# probe passes but the real fentry/fexit programs do not load (a stricter
# verifier; here MEMATTR_TEST_FENTRY_UNLOADABLE binds an fexit one to a
# function of no argument, which the verifier refuses), the node service loads the syscall
# tracepoints' programs instead, starts, and its start line says why. Seen
# failing with the fallback removed: the daemon exits, "cannot load the BPF
# programs".
source "$(dirname "$0")/../../tests/integration/lib.sh"

it_setup
ERR=$TMPD/daemon.err
MEMATTR_TEST_FENTRY_UNLOADABLE=1 "$MEMATTR_BIN" daemon --spool "$TMPD/spool" --listen none --socket none 2>"$ERR" &
DAEMON_PID=$!
track_pid "$DAEMON_PID"
wait_line_of "$DAEMON_PID" "$ERR" '^memattr-bpf: daemon: watching' "the daemon's start"
line=$(grep '^memattr-bpf: daemon: watching' "$ERR")
[[ $line == *"memory calls through syscall tracepoints (the fentry programs did not load: "* ]] ||
	fail "the start line does not name the fallback: $line"
log "start line: ...${line##*attribution }"
kill -TERM "$DAEMON_PID"
wait_exit "$DAEMON_PID" 120 || fail "the daemon did not stop"
[ "$WAIT_RC" -eq 0 ] || fail "the daemon exited with status $WAIT_RC: $(tail -3 "$ERR")"
check_no_bpf_leftovers
pass
