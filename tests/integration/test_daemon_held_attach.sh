#!/bin/bash
# The node service started after a job allocated (issue 31): a 2-rank
# mpi_held job (test_held_attach's: every block allocated before anything
# traces it) runs first; `memattr-bpf daemon` starts after, picks the job up
# by its SLURM_JOB_ID in its /proc walk, and must infer who holds that
# memory as the per-job tool does (the same attach path): app and
# lib:libtruth.so within 5% of their whole size in the spooled timelines,
# and the spool's run_info.csv counts what was inferred.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"
source "$(dirname "$0")/lang_truth.sh"

it_setup
SPOOL=$TMPD/spool
truth_start_job 2 held "$TMPD/bin/mpi_held$MPI_SUFFIX" --log-dir @LOGS@ --go-file @GO@ --unit-mib 4 --plateau-ms 1500
T_LINE=$(mono_now)
start_daemon --spool "$SPOOL" --listen none --interval 100
t0=$EPOCHREALTIME
JOBDIR=$(user_spool_dir "$SPOOL" "$TEST_USER" "$TRUTH_JOB")
until [ -e "$JOBDIR/rank-1.csv.gz" ]; do
	elapsed_since "$t0" 20 && fail "the daemon did not pick job $TRUTH_JOB up: $(cat "$DAEMON_ERR")"
	sleep 0.1
done
sleep 0.5
start_sampler "$TMPD/sampler.csv"
go
wait_job_ok 120
wait_daemon_line "job $TRUTH_JOB.*ended" 20 || fail "no end of job $TRUTH_JOB in the daemon's log: $(tail -5 "$DAEMON_ERR")"
stop_sampler
stop_daemon
check_no_bpf_leftovers
OUT=$TMPD/out.daemon
mkdir -p "$OUT"
for r in 0 1; do
	zcat "$JOBDIR/rank-$r.csv.gz" >"$OUT/rank-$r.csv" || fail "cannot read rank $r's spooled timeline"
done
log "checking attribution: check_truth.py --absolute --prefix held --tol 0.05"
"$PY" "$IT_DIR/check_truth.py" "$OUT" --ranks 2 --sampler "$TMPD/sampler.csv" --log-dir "$LOGS" \
	--prefix held --tol 0.05 --absolute ||
	fail "attribution under the node service differs from the ground truth (above)"
info=$JOBDIR/run_info.csv
grep -q '^inferred_bytes:app,' "$info" || fail "the spool's run_info.csv has no inferred_bytes:app row: $(cat "$info")"
log "inferred: $(grep -E '^(infer|inferred)' "$info" | tr '\n' ' ')"
pass
