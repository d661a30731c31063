#!/bin/bash
# The node service killed and restarted, and its configuration file:
# - SIGKILL while a job runs: nothing stays attached, the spool is readable
#   (gzip streams whole up to the last sync flush: complete rows only);
# - a restart picks the running job up again (its /proc walk), writing a new
#   directory SPOOL/<job>.u<uid>.1 beside the first, never over it;
# - --config: settings from the file; SIGHUP re-reads it (a textfile
#   directory added, a retention that removes a job directory older than
#   it while keeping the live ones);
# - the file's "attribution = exact" (the default is sampled) puts a program
#   at every page fault while a job is traced (the daemon holds a link to
#   ma_rss_stat then, none while idle: test_daemon_on_demand) and says so;
#   a restart with the same file stays exact; SIGHUP with
#   "attribution = sampled" says it takes effect at the next start.
#   Checked to fail: with DK_ATTRIBUTION's case in daemon_cfg_set ignoring
#   the file (returning 0 before set_attribution), the first start fails
#   ("does not say attribution exact").
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"

command -v curl >/dev/null || fail "curl not installed (tools/install-deps.sh)"
it_setup
SPOOL=$TMPD/spool
PORT=$(free_port)
URL=http://127.0.0.1:$PORT/metrics
A=$((500000 + RANDOM * 32 + RANDOM % 32))
ADIR=$(user_spool_dir "$SPOOL" "$TEST_USER" "$A")
CONF=$TMPD/memattr-bpf.conf
cat >"$CONF" <<EOC
# test settings
spool = $SPOOL
listen = 127.0.0.1:$PORT
interval = 200
metrics-detail = rank
attribution = exact
EOC

# exact_daemon WHEN: the daemon runs exact attribution, as its file says.
exact_daemon() {
	grep -Eq '^memattr-bpf: daemon: watching.*attribution exact(,|$)' "$DAEMON_ERR" ||
		fail "$1: the daemon does not say attribution exact: $(grep watching "$DAEMON_ERR")"
}

# exact_links WHEN: while it traces a job, its program at every page fault is attached.
exact_links() {
	"$PY" "$IT_DIR/bpf_leftovers.py" --linked-by "$DAEMON_PID" ma_rss_stat >/dev/null ||
		fail "$1: attribution = exact and a job traced, yet the daemon holds no link to ma_rss_stat"
}

start_daemon --config "$CONF"
exact_daemon "first start"
user_job "$TEST_USER" 2 "$A" 8 25 "$TMPD/jobA.out"; PA=$UJOB_PID
t0=$EPOCHREALTIME
until curl -fsS "$URL" | grep -q "job=\"$A\",uid=\"$(id -u "$TEST_USER")\",step=\"\",rank=\"1\",component=\"total\""; do
	elapsed_since "$t0" 15 && fail "job $A not exposed after 15 s: $(cat "$DAEMON_ERR")"
	sleep 0.2
done
exact_links "first start"
sleep 1
log "job $A traced under the settings of $CONF; SIGKILL of the daemon"
kill -KILL "$DAEMON_PID"
wait "$DAEMON_PID" 2>/dev/null || true
wait_no_bpf_leftovers 10
log "nothing left attached ${LEFTOVERS_GONE_AFTER}s after SIGKILL"
for r in 0 1; do
	f=$ADIR/rank-$r.csv.gz
	zcat "$f" >"$TMPD/killed-$r.csv" 2>/dev/null || true
	rows=$(grep -c ',total,' "$TMPD/killed-$r.csv" || true)
	[ "$rows" -ge 3 ] || fail "$f after SIGKILL: $rows total rows readable"
	awk -F, 'NR > 1 && NF != 6 { bad++ } END { exit bad > 0 }' "$TMPD/killed-$r.csv" ||
		fail "$f after SIGKILL: a row cut short (the last sync flush should end on a whole row)"
done
log "spool readable after SIGKILL: $rows whole sample rows in rank-1.csv.gz"

# Restart: the running job is found again, in a directory of its own.
start_daemon --config "$CONF"
exact_daemon "restart"
exact_links "restart"
t0=$EPOCHREALTIME
until curl -fsS "$URL" | grep -q "job=\"$A\",uid=\"$(id -u "$TEST_USER")\",step=\"\",rank=\"1\",component=\"total\""; do
	elapsed_since "$t0" 15 && fail "the restarted daemon did not pick job $A up: $(cat "$DAEMON_ERR")"
	sleep 0.2
done
grep -q "job $A of $TEST_USER: tracing, writing $ADIR.1" "$DAEMON_ERR" ||
	fail "the restarted daemon did not write $ADIR.1: $(cat "$DAEMON_ERR")"
log "restart picked the running job up again, writing $ADIR.1"

# SIGHUP: a textfile directory and a retention of 1 day, read from the file.
TEXTFILE=$TMPD/textfile
mkdir -m 755 "$TEXTFILE"
OLD=$SPOOL/old-job
mkdir -m 750 "$OLD"
echo x >"$OLD/summary.csv"
touch -d '3 days ago' "$OLD/summary.csv" "$OLD"
touch -d '3 days ago' "$ADIR"	# ended with the killed daemon; old by now
printf 'textfile = %s\nretain = 1\nattribution = sampled\n' "$TEXTFILE" >>"$CONF"
kill -HUP "$DAEMON_PID"
t0=$EPOCHREALTIME
until [ -s "$TEXTFILE/memattr.prom" ] && [ ! -e "$OLD" ]; do
	elapsed_since "$t0" 10 && fail "after SIGHUP: textfile $(ls "$TEXTFILE"), old dir $(ls -d "$OLD" 2>&1); daemon: $(cat "$DAEMON_ERR")"
	sleep 0.2
done
grep -q "SIGHUP: settings re-read" "$DAEMON_ERR" || fail "no SIGHUP line"
grep -q "SIGHUP: attribution takes effect at the next start" "$DAEMON_ERR" ||
	fail "attribution changed in the file, no word that it waits for the next start: $(grep SIGHUP "$DAEMON_ERR")"
[ -d "$ADIR.1" ] || fail "retention removed the live job's directory"
grep -q "job=\"$A\"" "$TEXTFILE/memattr.prom" || fail "memattr.prom lacks job $A"
log "SIGHUP: textfile written, a 3-day-old job directory removed (retain = 1), the live one kept"
# A bad file on SIGHUP: kept settings, one clear line, still running.
echo 'max-jobs = many' >>"$CONF"
kill -HUP "$DAEMON_PID"
sleep 0.5
grep -q "SIGHUP: .*max-jobs.*keeping the settings in force" "$DAEMON_ERR" || fail "no refusal of the bad file: $(tail -3 "$DAEMON_ERR")"
pid_running "$DAEMON_PID" || fail "the daemon died on a bad configuration file"

wait_exit "$PA" 60 || fail "job $A did not end"
[ "$WAIT_RC" -eq 0 ] || fail "job $A exited $WAIT_RC: $(tail -5 "$TMPD/jobA.out")"
t0=$EPOCHREALTIME
until grep -q "job $A ended" "$DAEMON_ERR"; do
	elapsed_since "$t0" 10 && fail "job $A's session did not end"
	sleep 0.2
done
stop_daemon
wait_no_bpf_leftovers 10
for r in 0 1; do
	gzip -t "$ADIR.1/rank-$r.csv.gz" || fail "$ADIR.1/rank-$r.csv.gz incomplete after the job ended"
done
pass
