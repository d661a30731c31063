#!/bin/bash
# --duration 3 on a job that runs much longer: the tool must stop by itself
# about 3 s after its tracing line (what it read of the memory held before,
# at attach, is not part of the duration), exit 0 with complete CSVs, and leave
# the job running unharmed to its own end.
source "$(dirname "$0")/lib.sh"

NP=2
HOLD_MIB=8
DURATION=3

it_setup
start_job "$NP" -- "$TMPD/bin/mpi_hold" --log-dir "$LOGS" --hold-mib "$HOLD_MIB" \
	--hold-s 120 --tick-ms 50 --stop-file "$STOP_FILE" --go-file "$GO_FILE"
wait_ranks "$NP" 30
wait_events hold ready "$NP" 30

OUT=$TMPD/out
start_tool --job "$MPIRUN_PID" --output "$OUT" --duration "$DURATION"
wait_tool_ready 30
start_sampler "$TMPD/sampler.csv"
go	# the ranks map and touch their memory while traced
wait_tool_ok $((DURATION + 10)) "--duration $DURATION"
stop_sampler
# The duration counts from the tracing line: not an early stop nor a late one.
after_ready=$(awk -v a="$TOOL_READY" -v b="$EXITED_AT" 'BEGIN { printf "%.2f", b - a }')
total=$(awk -v a="$TOOL_START" -v b="$EXITED_AT" 'BEGIN { printf "%.2f", b - a }')
log "tool ran ${total}s in all, ${after_ready}s after its tracing line"
awk -v r="$after_ready" -v d="$DURATION" 'BEGIN { exit !(r >= d - 0.2) }' ||
	fail "tool stopped ${after_ready}s after its tracing line, before --duration $DURATION"
awk -v r="$after_ready" -v d="$DURATION" 'BEGIN { exit !(r <= d + 1.5) }' ||
	fail "tool stopped ${after_ready}s after its tracing line, --duration was $DURATION"
for r in "${!RANK_PID[@]}"; do
	pid_running "${RANK_PID[$r]}" || fail "rank $r (pid ${RANK_PID[$r]}) died when the tool stopped"
done
check_no_bpf_leftovers
run_checker "$OUT" --ranks "$NP" --sampler "$TMPD/sampler.csv" --hold-mib "$HOLD_MIB"
last=$(tail -n 1 "$OUT/rank-0.csv" | cut -d, -f1)
# time_s counts from the probes' attach, before the tracing line.
awk -v l="$last" -v t="$total" 'BEGIN { exit !(l <= t + 0.2) }' ||
	fail "last sample at time_s $last, after the tool's ${total}s"

touch "$STOP_FILE"
wait_job_ok 30
pass
