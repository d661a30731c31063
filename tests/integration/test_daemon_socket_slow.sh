#!/bin/bash
# A user who reads the socket's answer slowly delays nobody else (issue 32,
# finding 7). User 1's job has a big answer (600 timeline files: planted in
# its spool directory, as a many-rank job would have) and user 1 reads it a
# line every 0.5 s; meanwhile user 2 asks for their own job and must be
# served within 4 s. User 1's slow answer is cut off at its deadline (5 s
# for the whole answer), not served for minutes.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"

it_setup
two_users_one_socket

# User 1 reads their answer a line every 0.5 s.
runuser -u "$TEST_USER" -- "$PY" - "$SOCK" "$A" >"$TMPD/slow.out" 2>&1 <<'PY' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.connect(sys.argv[1])
s.sendall(f"MEMATTR/1 JOB {sys.argv[2]}\n".encode())
t0, lines, end = time.monotonic(), 0, False
while time.monotonic() - t0 < 20:
    time.sleep(0.5)
    try:
        msg, anc, flags, addr = s.recvmsg(64, socket.CMSG_SPACE(4 * 4))
    except OSError:
        break
    for level, kind, data in anc:
        import array
        fds = array.array("i"); fds.frombytes(data[:len(data) - len(data) % 4])
        for fd in fds:
            __import__("os").close(fd)
    if not msg:
        break
    lines += msg.count(b"\n")
    end = end or b"END\n" in msg
print(f"slow reader: {lines} lines, END {end}, after {time.monotonic() - t0:.1f} s")
PY
SLOW=$!
track_pid "$SLOW"
sleep 1.5
user2_served_within 4 "user 1 read slowly"
log "user 2 served in ${TOOK}s while user 1 read a line every 0.5 s"
wait_exit "$SLOW" 30 || fail "the slow reader did not end"
grep -q "END False" "$TMPD/slow.out" || fail "the slow answer was sent whole: $(cat "$TMPD/slow.out")"
log "$(cat "$TMPD/slow.out") (cut off at the answer's deadline)"
for p in "$PA" "$PB"; do wait_exit "$p" 60 || fail "a job did not end"; done
stop_daemon
wait_no_bpf_leftovers 10
pass
