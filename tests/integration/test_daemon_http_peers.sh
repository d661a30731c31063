#!/bin/bash
# One host cannot take every slot of the metrics endpoint: a client at
# 127.0.0.2 keeps 64 idle connections open, renewing each as soon as the
# daemon drops it (the 2 s request limit), and still every scrape from
# 127.0.0.1 answers within 1 s. Without a per-address cap the 64 idle
# connections hold all slots and a scrape waits in the backlog for one of
# them to time out.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"

command -v curl >/dev/null || fail "curl not installed (tools/install-deps.sh)"
it_setup
PORT=$(free_port)
URL=http://127.0.0.1:$PORT/metrics
start_daemon --spool "$TMPD/spool" --listen "127.0.0.1:$PORT" --interval 200
wait_http "$URL" 10

# 64 idle connections from 127.0.0.2, each renewed once the daemon closes it, for 12 s.
"$PY" - "$PORT" >"$TMPD/hog.out" 2>&1 <<'PY' &
import socket, sys, time
port = int(sys.argv[1])
def conn():
    s = socket.socket()
    s.bind(("127.0.0.2", 0))
    s.setblocking(False)
    try:
        s.connect(("127.0.0.1", port))
    except BlockingIOError:
        pass
    return s
socks = [conn() for _ in range(64)]
end = time.monotonic() + 12
renewed = 0
while time.monotonic() < end:
    for i, s in enumerate(socks):
        try:
            if s.recv(1, socket.MSG_DONTWAIT) == b"":
                raise ConnectionResetError
        except (BlockingIOError, InterruptedError):
            continue
        except OSError:
            pass
        s.close()
        socks[i] = conn()
        renewed += 1
    time.sleep(0.02)
print("renewed", renewed)
PY
HOG=$!
track_pid "$HOG"
sleep 1
slow=0
for i in $(seq 1 10); do
	t0=$EPOCHREALTIME
	curl -fsS --max-time 1 "$URL" -o /dev/null || slow=$((slow + 1))
	log "scrape $i: $(seconds_since "$t0") s"
	sleep 0.5
done
wait_exit "$HOG" 20 || fail "the idle-connection client did not end"
log "127.0.0.2's client: $(cat "$TMPD/hog.out")"
[ "$slow" -eq 0 ] || fail "$slow of 10 scrapes from 127.0.0.1 failed or took over 1 s while 127.0.0.2 held idle connections"
log "10 scrapes within 1 s each while another address renewed 64 idle connections"
stop_daemon
wait_no_bpf_leftovers 10
pass
