#!/bin/bash
# Another tracer's uretprobe on malloc (bpftrace/bcc memleak, `perf probe`,
# a profiler) must not move memory to the wrong owner. As
# test_dlopen_after_attach (a plugin dlopen'ed after attach mallocs and
# mmaps for itself), but each rank also carries a uretprobe on libc's malloc
# placed by foreign_uretprobe.py (perf_event_open bound to the ranks' pids,
# nothing else on the node is probed). While malloc runs, the kernel has
# replaced its return address on the stack with the [uprobes] trampoline;
# the plugin's malloc'd block must still be `lib:libplugin.so`, not `app`.
source "$(dirname "$0")/lib.sh"

NP=2
MALLOC_MIB=8
MMAP_MIB=4
JOB_ID=$((950000 + RANDOM * 32 + RANDOM % 32))

it_setup
start_job "$NP" -x "SLURM_JOB_ID=$JOB_ID" -- "$TMPD/bin/mpi_dlopen" --log-dir "$LOGS" \
	--go-file "$GO_FILE" --malloc-mib "$MALLOC_MIB" --mmap-mib "$MMAP_MIB" --plateau-ms 800
wait_ranks "$NP" 30
wait_events dlopen ready "$NP" 30

libc=$(awk '$6 ~ /\/libc\.so\.6$/ { print $6; exit }' "/proc/${RANK_PID[0]}/maps")
[ -n "$libc" ] || fail "rank 0 maps no libc.so.6"
"$PY" "$IT_DIR/foreign_uretprobe.py" "$libc" malloc "${RANK_PID[@]}" >"$TMPD/foreign.out" 2>&1 &
FOREIGN_PID=$!
track_pid "$FOREIGN_PID"
t0=$EPOCHREALTIME
until grep -q '^ready' "$TMPD/foreign.out"; do
	pid_running "$FOREIGN_PID" || fail "foreign_uretprobe.py failed: $(cat "$TMPD/foreign.out")"
	elapsed_since "$t0" 10 && fail "foreign_uretprobe.py not ready after 10 s"
	sleep 0.05
done
log "$(cat "$TMPD/foreign.out")"

OUT=$TMPD/out
start_tool --job "$JOB_ID" --output "$OUT"
wait_tool_ready 30
start_sampler "$TMPD/sampler.csv"
go
wait_job_ok 60
wait_tool_ok 15 "the job ended"
stop_sampler
kill -TERM "$FOREIGN_PID" 2>/dev/null || true
wait "$FOREIGN_PID" 2>/dev/null || true
check_no_bpf_leftovers
run_checker "$OUT" --ranks "$NP" --sampler "$TMPD/sampler.csv"
log "checking attribution: check_truth.py --prefix dlopen"
"$PY" "$IT_DIR/check_truth.py" "$OUT" --ranks "$NP" --sampler "$TMPD/sampler.csv" \
	--log-dir "$LOGS" --prefix dlopen --t-line "$T_LINE" ||
	fail "with a foreign uretprobe on malloc, the plugin's memory is charged elsewhere (above)"
pass
