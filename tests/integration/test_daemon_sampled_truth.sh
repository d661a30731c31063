#!/bin/bash
# The node service as a site runs it, end to end against known sizes: its
# attribution is sampled unless told otherwise (issue 34). `memattr-bpf
# daemon` starts with no --attribution, --interval or --pss-interval (its
# defaults: sampled, 1000 ms, 10000 ms); a 4-rank mpi_truth job of the test
# user starts after it (ranks seen at exec, nothing inferred). Then:
#  - the daemon says "attribution sampled" and holds no link to ma_rss_stat
#    or ma_fault_user (no program at any fault of the node);
#  - the spool's run_info.csv says modes,sampled and counts page counts;
#  - the spooled timelines keep the CSV contract (components sum to total;
#    peak total within 3% of the kernel's, check_csv.py);
#  - in every plateau, total is the kernel's VmRSS (the /proc sampler's,
#    within 1% + 64 KiB) and every component is within 2% of its truth
#    (+512 KiB): issue 34's bound on the sampled mode.
# Checked to fail: with daemon_cfg_defaults' `c->sampled = true` removed
# (the default back to exact) it fails at once: the watching line says
# "attribution exact" (the link check and modes,sampled would fail next).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"
source "$(dirname "$0")/lang_truth.sh"

NP=4
it_setup
SPOOL=$TMPD/spool
start_daemon --spool "$SPOOL" --listen none
grep -q '^memattr-bpf: daemon: watching.*attribution sampled' "$DAEMON_ERR" ||
	fail "the daemon does not say it attributes sampled by default: $(cat "$DAEMON_ERR")"
for prog in ma_rss_stat ma_fault_user; do
	! "$PY" "$IT_DIR/bpf_leftovers.py" --linked-by "$DAEMON_PID" "$prog" >"$TMPD/fault_progs.txt" ||
		fail "the daemon's default is sampled, yet it holds a link to $prog: $(cat "$TMPD/fault_progs.txt")"
done
log "daemon: attribution sampled by default, no program at page faults"

truth_start_job "$NP" truth "$TMPD/bin/mpi_truth$MPI_SUFFIX" --log-dir @LOGS@ --go-file @GO@ \
	--unit-mib 4 --plateau-ms 3000
wait_daemon_line "job $TRUTH_JOB of " 15 || fail "the daemon did not pick job $TRUTH_JOB up: $(cat "$DAEMON_ERR")"
JOBDIR=$(user_spool_dir "$SPOOL" "$TEST_USER" "$TRUTH_JOB")
start_sampler "$TMPD/sampler.csv"
go
wait_job_ok 180
wait_daemon_line "job $TRUTH_JOB.*ended" 20 || fail "no end of job $TRUTH_JOB in the daemon's log: $(tail -5 "$DAEMON_ERR")"
stop_sampler
stop_daemon
check_no_bpf_leftovers

info=$JOBDIR/run_info.csv
grep -qx 'modes,sampled' "$info" || fail "the spool's run_info.csv does not say modes,sampled: $(grep '^modes,' "$info")"
counts=$(awk -F, '$1 == "sampled_counts_touched" || $1 == "sampled_counts_all" { n += $2 } END { print n + 0 }' "$info")
[ "$counts" -gt 0 ] || fail "run_info.csv counts no page count; the truth job's plateaus need them"
log "run_info: $(grep -E '^(modes|sampled_counts_touched|sampled_counts_all|sampled_count_ms),' "$info" | tr '\n' ' ')"

OUT=$TMPD/out.daemon
mkdir -p "$OUT"
for r in $(seq 0 $((NP - 1))); do
	zcat "$JOBDIR/rank-$r.csv.gz" >"$OUT/rank-$r.csv" || fail "cannot read rank $r's spooled timeline"
done
cp "$JOBDIR/summary.csv" "$OUT/"
run_checker "$OUT" --ranks "$NP" --sampler "$TMPD/sampler.csv"
log "checking attribution: check_truth.py --tol 0.02 --total-tol 0.01"
"$PY" "$IT_DIR/check_truth.py" "$OUT" --ranks "$NP" --sampler "$TMPD/sampler.csv" --log-dir "$LOGS" \
	--tol 0.02 --total-tol 0.01 ||
	fail "the daemon's default (sampled) attribution differs from the ground truth (above)"
pass
