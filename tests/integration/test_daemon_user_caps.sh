#!/bin/bash
# One user cannot poison a job ID for later, nor take the node service's
# job slots (issue 32, finding 5).
#  A. --max-jobs 2 filled by X's fakes, X's claim of the ID O's next job
#     will have refused; the fakes exit; O's real job of that ID is traced
#     as O's (refused IDs are kept per (uid, ID): X's refusal is not O's).
#  B. --max-jobs 4 --max-jobs-per-user 2: X's five fake IDs get 2 slots,
#     the rest refused, memattr_refused_total{reason="max_jobs_per_user"};
#     O's job still gets a slot.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"

command -v curl >/dev/null || fail "curl not installed (tools/install-deps.sh)"
it_setup
ensure_second_user
O=$TEST_USER X=$TEST_USER2
PORT=$(free_port)
URL=http://127.0.0.1:$PORT/metrics
BASE=$((800000 + RANDOM * 32 + RANDOM % 32))
F=$((BASE + 9))
# x_claim ID: a process of X's whose environment claims job ID; its pid in XPID.
x_claim() {
	runuser -u "$X" -- env -i PATH=/usr/bin:/bin PBS_JOBID="$1" sleep 40 >/dev/null 2>&1 &
	XPID=$!
	track_pid "$XPID"
	wait_daemon_line "job $1 " 10 || fail "the daemon did not see X's claim of $1: $(cat "$DAEMON_ERR")"
}
o_job_traced() {	# ID: O's 1-rank job of ID, which must be traced and exposed as O's
	user_job "$O" 1 "$1" 4 4 "$TMPD/job$1.out"
	local p=$UJOB_PID t0=$EPOCHREALTIME
	wait_daemon_line "job $1 of $O:" 15 || fail "O's job $1 not traced: $(cat "$DAEMON_ERR")"
	until curl -fsS "$URL" >"$TMPD/m.txt" && grep -q "^memattr_rank_resident_bytes{job=\"$1\",uid=\"$(id -u "$O")\",step=\"\",rank=\"0\",component=\"total\"}" "$TMPD/m.txt"; do
		elapsed_since "$t0" 10 && fail "O's job $1 not exposed: $(grep "job=\"$1\"" "$TMPD/m.txt" | head -3)"
		sleep 0.3
	done
	wait_exit "$p" 60 || fail "job $1 did not end"
}

# ---- A. the refused ID is X's, not O's.
start_daemon --spool "$TMPD/spoolA" --listen "127.0.0.1:$PORT" --interval 200 --max-jobs 2 --metrics-detail rank
FAKES=()
x_claim "fakeA$BASE.1"; FAKES+=("$XPID")
x_claim "fakeA$BASE.2"; FAKES+=("$XPID")
x_claim "$F"; FAKES+=("$XPID")
grep -q "job $F not traced: --max-jobs reached" "$DAEMON_ERR" || fail "X's claim of $F not refused: $(cat "$DAEMON_ERR")"
for p in "${FAKES[@]}"; do kill "$p" 2>/dev/null || true; done
for p in "${FAKES[@]}"; do wait_exit "$p" 10 || true; done
t0=$EPOCHREALTIME
while curl -fsS "$URL" | grep -q "job=\"fakeA$BASE"; do
	elapsed_since "$t0" 10 && fail "X's fake jobs still exposed 10 s after they ended"
	sleep 0.2
done
o_job_traced "$F"
log "A: X's refused claim of $F did not refuse O's job $F"
stop_daemon

# ---- B. the per-user cap.
PORT=$(free_port)
URL=http://127.0.0.1:$PORT/metrics
start_daemon --spool "$TMPD/spoolB" --listen "127.0.0.1:$PORT" --interval 200 --max-jobs 4 --max-jobs-per-user 2 --metrics-detail rank
FAKES=()
for i in 1 2 3 4 5; do
	x_claim "fakeB$BASE.$i"
	FAKES+=("$XPID")
done
traced=$(grep -c "job fakeB$BASE\.[0-9] of $X:" "$DAEMON_ERR" || true)
[ "$traced" -eq 2 ] || fail "X's fake jobs traced: $traced, expected 2 (--max-jobs-per-user 2): $(cat "$DAEMON_ERR")"
o_job_traced "$((F + 1))"
refused=$(metric_value "$TMPD/m.txt" '^memattr_refused_total\{reason="max_jobs_per_user"\}')
[ "${refused:-0}" -ge 3 ] || fail "memattr_refused_total{reason=\"max_jobs_per_user\"} is '$refused', expected >= 3"
log "B: X's fakes took 2 slots (3 refused, counted $refused), O's job traced"
for p in "${FAKES[@]}"; do kill "$p" 2>/dev/null || true; done
for p in "${FAKES[@]}"; do wait_exit "$p" 10 || true; done
stop_daemon
wait_no_bpf_leftovers 10
pass
