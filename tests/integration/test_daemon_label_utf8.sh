#!/bin/bash
# A job ID is whatever bytes a user's environment holds (issue 32, finding
# 4): a user's process with PBS_JOBID=$'\xffA' must not make the node's
# page invalid (promtool, like Prometheus, rejects a page with a non-UTF-8
# label value, and with it every job's series on the node). The invalid
# byte is written as \xff; another user's job on the node stays exposed.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"

for tool in promtool curl; do
	command -v "$tool" >/dev/null || fail "$tool not installed (tools/install-deps.sh)"
done
it_setup
ensure_second_user
PORT=$(free_port)
URL=http://127.0.0.1:$PORT/metrics
OK_ID=$((700000 + RANDOM * 32 + RANDOM % 32))
BAD_TAIL=$RANDOM
start_daemon --spool "$TMPD/spool" --listen "127.0.0.1:$PORT" --interval 200

user_job "$TEST_USER" 1 "$OK_ID" 4 12 "$TMPD/ok.out"; POK=$UJOB_PID
runuser -u "$TEST_USER2" -- env -i PATH=/usr/bin:/bin PBS_JOBID=$'\xff'"A$BAD_TAIL" OMPI_COMM_WORLD_RANK=0 \
	"$PY" -c 'import time; b = b"x" * (4 << 20); time.sleep(10)' >"$TMPD/bad.out" 2>&1 &
PBAD=$!
track_pid "$PBAD"
t0=$EPOCHREALTIME
until curl -fsS "$URL" >"$TMPD/m.txt" && grep -q "A$BAD_TAIL\"" "$TMPD/m.txt" && grep -q "job=\"$OK_ID\"" "$TMPD/m.txt"; do
	elapsed_since "$t0" 15 && fail "both jobs not exposed after 15 s: $(grep -a total "$TMPD/m.txt" | grep -a rank_res); daemon: $(cat "$DAEMON_ERR")"
	sleep 0.3
done
rc=0
promtool check metrics <"$TMPD/m.txt" >"$TMPD/promtool.out" 2>&1 || rc=$?
# 0: clean, 3: lint only (names, help texts); 1 is a page Prometheus rejects.
[ "$rc" -eq 0 ] || [ "$rc" -eq 3 ] || fail "promtool check metrics rejects the page (exit $rc): $(head -3 "$TMPD/promtool.out")"
iconv -f UTF-8 -t UTF-8 <"$TMPD/m.txt" >/dev/null || fail "the page is not valid UTF-8"
grep -aq "job=\"\\\\\\\\xffA$BAD_TAIL\"" "$TMPD/m.txt" ||
	fail "the invalid byte is not written as \\xff: $(grep -a "A$BAD_TAIL" "$TMPD/m.txt" | head -2)"
log "a job ID with byte 0xff: written \\xff, promtool accepts the page (exit $rc), job $OK_ID exposed beside it"
wait_exit "$POK" 60 || fail "job $OK_ID did not end"
kill "$PBAD" 2>/dev/null || true
wait_exit "$PBAD" 10 || true
stop_daemon
wait_no_bpf_leftovers 10
pass
