#!/bin/bash
# A user's job directories in the node service's spool are capped (issue
# 32, finding 9): with --max-spool-dirs-per-user 3, five short processes of
# user X with distinct job IDs leave 3 directories; the other jobs are
# traced for the metrics only, counted under
# memattr_refused_total{reason="spool_dirs_per_user"}. The count survives
# a restart (the owner is recorded on each directory); user O's job still
# gets its directory.
# Names cannot be squatted: a job known by its environment only is named
# SPOOL/<ID>.u<uid>, so every name of the older scheme (SPOOL/<ID>,
# <ID>.1 ... <ID>.999) taken before O's job, and X's own claim of the ID,
# leave O's job its directory.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"

command -v curl >/dev/null || fail "curl not installed (tools/install-deps.sh)"
it_setup
ensure_second_user
O=$TEST_USER X=$TEST_USER2
SPOOL=$TMPD/spool
PORT=$(free_port)
URL=http://127.0.0.1:$PORT/metrics
BASE=$((970000 + RANDOM * 32 + RANDOM % 32))
x_short() {	# ID: a short process of X's claiming job ID, waited for
	runuser -u "$X" -- env -i PATH=/usr/bin:/bin PBS_JOBID="$1" sleep 0.6 >/dev/null 2>&1
	wait_daemon_line "job $1 ended" 10 || fail "X's job $1 not seen to end: $(cat "$DAEMON_ERR")"
}
start_daemon --spool "$SPOOL" --listen "127.0.0.1:$PORT" --interval 200 --max-spool-dirs-per-user 3
for i in 1 2 3 4 5; do x_short "s$BASE.$i"; done
n=$(find "$SPOOL" -mindepth 1 -maxdepth 1 -type d -name "s$BASE.*" | wc -l)
[ "$n" -eq 3 ] || fail "X has $n job directories in the spool, expected 3: $(ls "$SPOOL")"
grep -q "job s$BASE.5: no spool files: its user has 3 job directories" "$DAEMON_ERR" ||
	fail "X's fifth job not told why it has no spool files: $(cat "$DAEMON_ERR")"
curl -fsS "$URL" >"$TMPD/m.txt"
refused=$(metric_value "$TMPD/m.txt" '^memattr_refused_total\{reason="spool_dirs_per_user"\}')
[ "${refused:-0}" -ge 2 ] || fail "memattr_refused_total{reason=\"spool_dirs_per_user\"} is '$refused', expected >= 2"
log "X: 3 spool directories for 5 jobs, 2 jobs without (counted $refused)"
stop_daemon

# Restarted on the same spool: X is still at the cap, O is not.
start_daemon --spool "$SPOOL" --listen "127.0.0.1:$PORT" --interval 200 --max-spool-dirs-per-user 3
x_short "s$BASE.6"
[ ! -e "$(user_spool_dir "$SPOOL" "$X" "s$BASE.6")" ] || fail "after a restart X got a fourth spool directory"
user_job "$O" 1 "$BASE" 4 2 "$TMPD/jobO.out"; PO=$UJOB_PID
wait_exit "$PO" 60 || fail "O's job did not end"
wait_daemon_line "job $BASE ended" 10 || fail "O's job $BASE not seen to end: $(cat "$DAEMON_ERR")"
[ -d "$(user_spool_dir "$SPOOL" "$O" "$BASE")" ] || fail "O's job got no spool directory: $(grep "$BASE" "$DAEMON_ERR")"
log "after a restart: X still capped, O's job spooled"
stop_daemon

# Squatting: the ID O's next job will have (Slurm's IDs are predictable),
# every name of it taken beforehand, and X's own claim of it.
SPOOL2=$TMPD/spool2
ID=$((BASE + 7))
mkdir -m 755 "$SPOOL2"
mkdir -m 750 "$SPOOL2/$ID" "$SPOOL2/$ID".{1..999}
start_daemon --spool "$SPOOL2" --listen none --interval 200
x_short "$ID"
XDIR=$(user_spool_dir "$SPOOL2" "$X" "$ID") ODIR=$(user_spool_dir "$SPOOL2" "$O" "$ID")
[ -d "$XDIR" ] || fail "X's claim of $ID got no $XDIR: $(grep "$ID" "$DAEMON_ERR")"
user_job "$O" 1 "$ID" 4 2 "$TMPD/jobO2.out"; PO=$UJOB_PID
wait_exit "$PO" 60 || fail "O's job $ID did not end"
# X's job of the ID ended before: O's own end is the second line saying so.
t0=$EPOCHREALTIME
until [ "$(grep -c "job $ID ended" "$DAEMON_ERR")" -ge 2 ]; do
	elapsed_since "$t0" 10 && fail "O's job $ID not seen to end: $(cat "$DAEMON_ERR")"
	sleep 0.1
done
! grep -q "no free directory name" "$DAEMON_ERR" || fail "a job got no directory: $(grep "$ID" "$DAEMON_ERR")"
[ -s "$ODIR/summary.csv" ] || fail "O's job $ID has no $ODIR/summary.csv: $(grep "$ID" "$DAEMON_ERR")"
log "every name of job $ID taken and X's claim of it: O's job still writes $ODIR"
stop_daemon
wait_no_bpf_leftovers 10
pass
