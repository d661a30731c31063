#!/bin/bash
# The metrics endpoint serves every scraper while one client dribbles its
# request a byte at a time (issue 32, finding 6): the 2 s limit is on the
# whole request, not on each read, and clients are served side by side.
# Two such clients are connected while curl scrapes ten times: every
# scrape answers within 1 s, and the dribbling clients are cut off within
# 3.5 s of connecting.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"

command -v curl >/dev/null || fail "curl not installed (tools/install-deps.sh)"
it_setup
PORT=$(free_port)
URL=http://127.0.0.1:$PORT/metrics
start_daemon --spool "$TMPD/spool" --listen "127.0.0.1:$PORT" --interval 200
wait_http "$URL" 10

slow_client() {	# OUT: dribble a request a byte every 0.4 s; how long until the daemon hung up
	"$PY" - "$PORT" >"$1" 2>&1 <<'PY' &
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
t0 = time.monotonic()
req = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 200
closed = None
for b in req:
    try:
        s.send(bytes([b]))
    except OSError:
        closed = time.monotonic() - t0
        break
    s.settimeout(0.4)
    try:
        if s.recv(1) == b"":
            closed = time.monotonic() - t0
            break
    except socket.timeout:
        pass
    except OSError:
        closed = time.monotonic() - t0
        break
    if time.monotonic() - t0 > 12:
        break
print(f"closed_after {closed}")
PY
	SLOW_PID=$!
	track_pid "$SLOW_PID"
}
slow_client "$TMPD/slow1.out"; S1=$SLOW_PID
slow_client "$TMPD/slow2.out"; S2=$SLOW_PID
sleep 0.3
for i in $(seq 10); do
	t0=$EPOCHREALTIME
	curl -fsS --max-time 1 -o /dev/null "$URL" || fail "scrape $i failed or took over 1 s while slow clients were connected"
	log "scrape $i: $(seconds_since "$t0") s"
	sleep 0.2
done
for p in "$S1" "$S2"; do
	wait_exit "$p" 20 || fail "slow client still running"
done
for f in "$TMPD/slow1.out" "$TMPD/slow2.out"; do
	after=$(awk '/^closed_after/ { print $2 }' "$f")
	"$PY" -c 'import sys; v = sys.argv[1]; sys.exit(0 if v != "None" and float(v) < 3.5 else 1)' "$after" ||
		fail "a client dribbling its request was kept $after s (expected cut off within 3.5 s): $(cat "$f")"
	log "dribbling client cut off after ${after}s"
done
stop_daemon
wait_no_bpf_leftovers 10
pass
