#!/bin/bash
# One user cannot take the user socket from another (issue 32, after
# finding 7): user 1 holds 40 silent connections and 12 requests whose
# answers (600 files each) it never reads; user 2's `memattr-bpf --job` is
# served within 3 s all the same (before the per-user shares: 1.5 s behind
# the silent ones and 4.7 s behind the slow readers, measured on the
# socket alone). User 1's share is 4 connection slots and 2 answer threads:
# some of its 12 requests are answered "ERR busy" at once.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"

it_setup
two_users_one_socket

# User 1: 12 requests never read, then 40 connections that say nothing;
# after 8 s, the first line each request got.
runuser -u "$TEST_USER" -- "$PY" - "$SOCK" "$A" >"$TMPD/hog.out" 2>&1 <<'PY' &
import socket, sys, time
path, job = sys.argv[1], sys.argv[2]
slow = []
for _ in range(12):
    s = socket.socket(socket.AF_UNIX)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(path)
    # Past its share the daemon may answer "ERR busy" and close before the
    # request is written: the answer is still there to read.
    try:
        s.sendall(f"MEMATTR/1 JOB {job}\n".encode())
    except (BrokenPipeError, ConnectionResetError):
        pass
    slow.append(s)
silent = []
for _ in range(40):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    silent.append(s)
print("holding", flush=True)
time.sleep(8)
busy = served = other = 0
for s in slow:
    s.settimeout(0.2)
    try:
        first = s.recv(64)
    except OSError:
        first = b""
    if first.startswith(b"ERR busy "):
        busy += 1
    elif first.startswith(b"JOB "):
        served += 1
    else:
        other += 1
print(f"hog: {busy} busy, {served} served, {other} other")
PY
HOG=$!
track_pid "$HOG"
wait_line_of "$HOG" "$TMPD/hog.out" '^holding' "user 1's clients"
sleep 0.5
user2_served_within 3 "user 1 held 52 connections"
log "user 2 served in ${TOOK}s while user 1 held 40 silent connections and 12 unread answers"
wait_exit "$HOG" 30 || fail "user 1's clients did not end"
busy=$(sed -n 's/^hog: \([0-9]*\) busy.*/\1/p' "$TMPD/hog.out")
[ -n "$busy" ] && [ "$busy" -ge 1 ] || fail "none of user 1's 12 requests was refused 'ERR busy': $(cat "$TMPD/hog.out")"
log "$(cat "$TMPD/hog.out" | tail -1) (user 1's share: 4 slots, 2 answers)"
for p in "$PA" "$PB"; do wait_exit "$p" 60 || fail "a job did not end"; done
stop_daemon
wait_no_bpf_leftovers 10
pass
