#!/bin/bash
# Attribution against ground truth: a 4-rank mpi_truth job (the program's
# mallocs of every kind, a library's own mallocs and mmap, a thread's arena,
# strdup, MPI_Alloc_mem), attached by --job after it started. Every
# component (app, lib:libtruth.so, mpi) must match what the workload says it
# holds, plateau by plateau, within 5%.
source "$(dirname "$0")/lib.sh"

NP=4
UNIT_MIB=1
JOB_ID=$((200000 + RANDOM * 32 + RANDOM % 32))

it_setup
start_job "$NP" -x "SLURM_JOB_ID=$JOB_ID" -- "$TMPD/bin/mpi_truth" --log-dir "$LOGS" \
	--go-file "$GO_FILE" --unit-mib "$UNIT_MIB" --plateau-ms 700
wait_ranks "$NP" 30
wait_events truth ready "$NP" 30

OUT=$TMPD/out
start_tool --job "$JOB_ID" --output "$OUT"
wait_tool_ready 30
start_sampler "$TMPD/sampler.csv"
go

wait_job_ok 120
wait_tool_ok 15 "the job ended"
stop_sampler
check_no_bpf_leftovers
run_checker "$OUT" --ranks "$NP" --sampler "$TMPD/sampler.csv"
log "checking attribution: check_truth.py"
"$PY" "$IT_DIR/check_truth.py" "$OUT" --ranks "$NP" --sampler "$TMPD/sampler.csv" \
	--log-dir "$LOGS" --t-line "$T_LINE" || fail "attribution differs from the ground truth (above)"
pass
