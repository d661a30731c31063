#!/bin/bash
# The node service and Slurm: a real Slurm runs, as the test user, a batch
# job whose mpirun runs 4 ranks of mpi_hold with an emptied environment
# (env -i): no SLURM_JOB_ID in any rank. `memattr-bpf daemon` starts (or
# restarts) while they run: it finds them in /proc one by one, so only
# Slurm's cgroup ties them to the job (the batch script's own environment
# names it; its children are not followed at a fork the daemon never saw).
# It must trace them as that job, labelled with Slurm's job ID and the
# user, each rank's (R+1)*8 MiB in app.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"
source "$IT_DIR/slurm_lib.sh"

NP=4
MIB=8

command -v curl >/dev/null || fail "curl not installed (tools/install-deps.sh)"
it_setup
slurm_start

slurm_hold_job "$NP" "exec env -i --ignore-signal=PIPE PATH=/usr/bin:/bin HOME=\$HOME mpirun --oversubscribe -np $NP $TMPD/bin/mpi_hold --log-dir $LOGS --go-file $GO_FILE --stop-file $STOP_FILE --hold-mib $MIB --per-rank --hold-s 120"
for pid in $(pgrep -u "$TEST_USER" -f "$TMPD/bin/mpi_hold"); do
	grep -q '^SLURM_JOB_ID=' <(tr '\0' '\n' <"/proc/$pid/environ") &&
		fail "rank pid $pid carries SLURM_JOB_ID: the test would not prove the cgroup path"
done
PORT=$(free_port)
start_daemon --spool "$TMPD/spool" --listen "127.0.0.1:$PORT" --interval 100 --metrics-detail rank
go

# Until every rank's app holds its (R+1)*8 MiB in the daemon's exposition.
log "waiting for job $JOB's ranks in the daemon's metrics"
t0=$EPOCHREALTIME
while :; do
	curl -fsS --max-time 5 "http://127.0.0.1:$PORT/metrics" >"$TMPD/metrics.txt" || fail "no metrics from the daemon"
	ok=0
	for ((r = 0; r < NP; r++)); do
		v=$(metric_value "$TMPD/metrics.txt" "^memattr_rank_resident_bytes\{job=\"$JOB\",uid=\"$(id -u "$TEST_USER")\",step=\"batch\",rank=\"$r\",component=\"app\"\}" || true)
		want=$(((r + 1) * MIB << 20))
		[ -n "$v" ] && [ "$v" -ge "$want" ] && [ "$v" -le $((want + (2 << 20))) ] && ok=$((ok + 1))
	done
	[ "$ok" -eq "$NP" ] && break
	elapsed_since "$t0" 20 && fail "job $JOB's ranks not in the metrics as expected after 20 s: $(grep "job=\"$JOB\"" "$TMPD/metrics.txt" | grep 'component="app"' | head -8); daemon: $(tail -5 "$DAEMON_ERR")"
	sleep 0.3
done
grep -q "job $JOB of $TEST_USER: tracing" "$DAEMON_ERR" || fail "the daemon did not say it traces job $JOB: $(tail -5 "$DAEMON_ERR")"
log "job $JOB: 4 ranks labelled job=\"$JOB\",uid=\"$(id -u "$TEST_USER")\",step=\"batch\" with their app memory"
touch "$STOP_FILE"
stop_daemon
check_no_bpf_leftovers
pass
