#!/bin/bash
# Three overlapping jobs of two users, started and ended while one daemon
# runs: each job gets its own spool directory (its owner's group, files
# 0640, unreadable to the other user), its own series labelled with its
# user, and its series vanish when it ends while the others' stay. Then the
# caps: a daemon with --max-jobs 1 refuses a second job as a whole (no
# spool, no series, counted in memattr_refused_total{reason="max_jobs"}).
# Note: the daemon traces every job on the node; jobs of other tests
# running at the same time show up too, so counts are checked as "at least".
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"

command -v curl >/dev/null || fail "curl not installed (tools/install-deps.sh)"
it_setup
ensure_second_user
G1=$(id -gn "$TEST_USER")
G2=$(id -gn "$TEST_USER2")
SPOOL=$TMPD/spool
PORT=$(free_port)
URL=http://127.0.0.1:$PORT/metrics
BASE=$((400000 + RANDOM * 32 + RANDOM % 32))
A=$BASE B=$((BASE + 1)) C=$((BASE + 2)) D=$((BASE + 3)) E=$((BASE + 4))

start_daemon --spool "$SPOOL" --listen "127.0.0.1:$PORT" --interval 200 --metrics-detail rank

user_job "$TEST_USER" 2 "$A" 8 14 "$TMPD/jobA.out"; PA=$UJOB_PID
user_job "$TEST_USER2" 2 "$B" 12 10 "$TMPD/jobB.out"; PB=$UJOB_PID
sleep 1
user_job "$TEST_USER" 1 "$C" 4 3 "$TMPD/jobC.out"; PC=$UJOB_PID

# All three traced at once, each under its own user.
t0=$EPOCHREALTIME
while :; do
	curl -fsS "$URL" >"$TMPD/m1.txt"
	n=0
	for spec in "$A:$TEST_USER:2" "$B:$TEST_USER2:2" "$C:$TEST_USER:1"; do
		IFS=: read -r id user np <<<"$spec"
		got=$(grep -c "^memattr_rank_resident_bytes{job=\"$id\",uid=\"$(id -u "$user")\",step=\"\",rank=\"[0-9]*\",component=\"total\"}" "$TMPD/m1.txt" || true)
		[ "$got" -eq "$np" ] && n=$((n + 1))
	done
	[ "$n" -eq 3 ] && break
	elapsed_since "$t0" 15 && fail "not all three jobs exposed after 15 s: $(grep 'component="total"' "$TMPD/m1.txt" | grep rank_resident); daemon: $(cat "$DAEMON_ERR")"
	sleep 0.3
done
jobs_now=$(metric_value "$TMPD/m1.txt" '^memattr_jobs ')
[ "$jobs_now" -ge 3 ] || fail "memattr_jobs $jobs_now while three jobs run"
log "three jobs of two users exposed at once (memattr_jobs $jobs_now)"
# Job B's rank total: its 12 MiB plus MPI's.
b0=$(metric_value "$TMPD/m1.txt" "^memattr_rank_resident_bytes\\{job=\"$B\",uid=\"$(id -u "$TEST_USER2")\",step=\"\",rank=\"0\",component=\"total\"\\}")
[ "$b0" -ge $((12 << 20)) ] || fail "job $B rank 0 total $b0 < its 12 MiB hold"

# Job C ends first: its series go, A's and B's stay, the daemon goes on.
wait_exit "$PC" 60 || fail "job $C did not end"
[ "$WAIT_RC" -eq 0 ] || fail "job $C exited $WAIT_RC: $(tail -5 "$TMPD/jobC.out")"
t0=$EPOCHREALTIME
while curl -fsS "$URL" | grep -q "job=\"$C\""; do
	elapsed_since "$t0" 10 && fail "job $C's series still exposed 10 s after it ended"
	sleep 0.2
done
curl -fsS "$URL" >"$TMPD/m2.txt"
grep -q "job=\"$A\"" "$TMPD/m2.txt" && grep -q "job=\"$B\"" "$TMPD/m2.txt" ||
	fail "jobs $A/$B lost their series when $C ended"
log "job $C ended: its series vanished, $A's and $B's stay"

for p in "$PA" "$PB"; do
	wait_exit "$p" 60 || fail "a job did not end"
	[ "$WAIT_RC" -eq 0 ] || fail "a job exited $WAIT_RC"
done
t0=$EPOCHREALTIME
while curl -fsS "$URL" | grep -Eq "job=\"($A|$B)\""; do
	elapsed_since "$t0" 10 && fail "series of ended jobs still exposed after 10 s"
	sleep 0.2
done
for id in "$A" "$B" "$C"; do
	wait_daemon_line "job $id ended" 10 || fail "no end of job $id in the daemon's log within 10 s: $(cat "$DAEMON_ERR")"
done

# Each job its own directory, owned by its user's group, closed to the other user.
check_dir() {	# ID USER GROUP NP OTHER_USER
	local d r
	d=$(user_spool_dir "$SPOOL" "$2" "$1")
	shift
	[ -d "$d" ] || fail "no spool directory $d"
	[ "$(stat -c '%a %U %G' "$d")" = "750 root $2" ] || fail "$d: $(stat -c '%a %U %G' "$d"), expected 750 root $2"
	for r in $(seq 0 $(($3 - 1))); do
		[ "$(stat -c '%a %G' "$d/rank-$r.csv.gz")" = "640 $2" ] || fail "$d/rank-$r.csv.gz: $(stat -c '%a %G' "$d/rank-$r.csv.gz")"
		gzip -t "$d/rank-$r.csv.gz" || fail "$d/rank-$r.csv.gz: not a whole gzip file after the job ended"
	done
	[ "$(ls "$d" | grep -c '^rank-')" -eq "$3" ] || fail "$d: $(ls "$d"), expected $3 rank files"
	if runuser -u "$4" -- cat "$d/summary.csv" >/dev/null 2>&1; then
		fail "$4 can read $d/summary.csv (another user's job)"
	fi
}
check_dir "$A" "$TEST_USER" "$G1" 2 "$TEST_USER2"
check_dir "$B" "$TEST_USER2" "$G2" 2 "$TEST_USER"
check_dir "$C" "$TEST_USER" "$G1" 1 "$TEST_USER2"
runuser -u "$TEST_USER2" -- zcat "$(user_spool_dir "$SPOOL" "$TEST_USER2" "$B")/rank-0.csv.gz" | grep -q ",0,.*,total," ||
	fail "$TEST_USER2 cannot read their own job's timeline"
"$MEMATTR_BIN" report "$(user_spool_dir "$SPOOL" "$TEST_USER2" "$B")" >/dev/null || fail "report cannot read the spool's .csv.gz"
log "spool: one directory per job, each its owner's group only; report reads it"
stop_daemon

# The cap: a daemon that may trace one job refuses the second, as a whole.
SPOOL2=$TMPD/spool2
PORT2=$(free_port)
user_job "$TEST_USER" 1 "$D" 4 20 "$TMPD/jobD.out"; PD=$UJOB_PID
sleep 1.5
start_daemon --spool "$SPOOL2" --listen "127.0.0.1:$PORT2" --interval 200 --max-jobs 1
user_job "$TEST_USER2" 1 "$E" 4 3 "$TMPD/jobE.out"; PE=$UJOB_PID
wait_exit "$PE" 60 || fail "job $E did not end"
[ "$WAIT_RC" -eq 0 ] || fail "job $E exited $WAIT_RC"
sleep 0.8
curl -fsS "http://127.0.0.1:$PORT2/metrics" >"$TMPD/m3.txt"
grep -q "job $E not traced: --max-jobs reached" "$DAEMON_ERR" || fail "job $E not refused: $(cat "$DAEMON_ERR")"
[ ! -e "$(user_spool_dir "$SPOOL2" "$TEST_USER2" "$E")" ] || fail "a refused job got a spool directory"
refused=$(metric_value "$TMPD/m3.txt" '^memattr_refused_total\{reason="max_jobs"\}')
[ "$refused" -ge 1 ] || fail "memattr_refused_total{reason=\"max_jobs\"} is $refused"
grep -q "job=\"$D\"" "$TMPD/m3.txt" || fail "job $D (admitted, running at start) not exposed"
log "--max-jobs 1: job $E refused and counted (memattr_refused_total{reason=\"max_jobs\"} $refused), job $D traced"
wait_exit "$PD" 60 || fail "job $D did not end"
stop_daemon
wait_no_bpf_leftovers 10
pass
