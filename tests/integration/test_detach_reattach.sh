#!/bin/bash
# Detach mid-run, then attach again: a 2-rank mpi_phases job (found by
# -x SLURM_JOB_ID) is traced once with --duration 2 while it waits for its
# go; that run must end by itself with complete CSVs and, while the job still
# runs, leave no ma_* program or link behind. A second attach, to a new
# --output, then follows the job through all its phases to its end: its
# figures must be exact from its first sample (app, mpi and total per
# plateau, check_csv.py --phase-dir), as if no one had attached before, and
# the job (which checks its own memory) must exit 0.
source "$(dirname "$0")/lib.sh"

NP=2
MALLOC_MIB=12
MMAP_MIB=6
ALLOC_MEM_MIB=4
JOB_ID=$((400000 + RANDOM * 32 + RANDOM % 32))

it_setup
start_job "$NP" -x "SLURM_JOB_ID=$JOB_ID" -- "$TMPD/bin/mpi_phases" --log-dir "$LOGS" \
	--go-file "$GO_FILE" --malloc-mib "$MALLOC_MIB" --mmap-mib "$MMAP_MIB" \
	--alloc-mem-mib "$ALLOC_MEM_MIB" --plateau-ms 700
wait_ranks "$NP" 30
wait_events phases ready "$NP" 30

# First attach: stops by itself after 2 s, the job still running.
OUT1=$TMPD/out-first
start_tool --job "$JOB_ID" --output "$OUT1" --duration 2
wait_tool_ready 30
check_tool_holds_bpf
start_sampler "$TMPD/sampler-first.csv"
wait_tool_ok 12 "--duration 2"
stop_sampler
for r in "${!RANK_PID[@]}"; do
	pid_running "${RANK_PID[$r]}" || fail "rank $r (pid ${RANK_PID[$r]}) died when the first tool detached"
done
log "job still running; checking nothing of ours is left attached"
check_no_bpf_leftovers
run_checker "$OUT1" --ranks "$NP" --sampler "$TMPD/sampler-first.csv"

# Second attach, new output directory: the whole run of phases.
OUT2=$TMPD/out-second
start_tool --job "$JOB_ID" --output "$OUT2"
wait_tool_ready 30
check_tool_holds_bpf
start_sampler "$TMPD/sampler-second.csv"
go
wait_job_ok 60
wait_tool_ok 15 "the job ended"
stop_sampler
check_no_bpf_leftovers
[ -z "$(ls -A "$OUT1" | grep -v '^\(rank-[0-9]*\|summary\|run_info\|mpi_calls\|alloc_stacks\)\.csv$' || true)" ] ||
	fail "unexpected files in the first run's output: $(ls "$OUT1")"
run_checker "$OUT2" --ranks "$NP" --sampler "$TMPD/sampler-second.csv" --phase-dir "$LOGS" \
	--malloc-mib "$MALLOC_MIB" --mmap-mib "$MMAP_MIB" --alloc-mem-mib "$ALLOC_MEM_MIB" \
	--t-line "$T_LINE"
pass
