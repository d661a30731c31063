#!/bin/bash
# --wait: `memattr-bpf --wait --job ID` started before any process of job ID
# exists must wait (quietly and cheaply), then attach when the job's first
# process appears, follow the ranks that start after it, and write rank
# CSVs that are exact through every phase of the 2-rank mpi_phases job
# launched with -x SLURM_JOB_ID=ID; it exits 0 by itself at the job's end.
source "$(dirname "$0")/lib.sh"

NP=2
MALLOC_MIB=12
MMAP_MIB=6
JOB_ID=$((800000 + RANDOM * 32 + RANDOM % 32))
WAIT_S=2

it_setup
OUT=$TMPD/out
start_tool --wait --job "$JOB_ID" --output "$OUT"
cpu0=$(awk '{ print $14 + $15 }' "/proc/$TOOL_PID/stat")
sleep "$WAIT_S"
pid_running "$TOOL_PID" || { wait "$TOOL_PID" || true; fail "the tool exited while waiting for job $JOB_ID: $(cat "$TOOL_ERR")"; }
grep -q '^memattr-bpf: tracing' "$TOOL_ERR" && fail "the tool says it traces before job $JOB_ID exists: $(cat "$TOOL_ERR")"
cpu1=$(awk '{ print $14 + $15 }' "/proc/$TOOL_PID/stat")
hz=$(getconf CLK_TCK)
log "waited ${WAIT_S}s: tool used $(((cpu1 - cpu0) * 1000 / hz)) ms of CPU"
# Waiting polls /proc; it must not busy-loop (10% of a core at most).
[ $(((cpu1 - cpu0) * 1000 / hz)) -le $((WAIT_S * 100)) ] ||
	fail "the tool used $(((cpu1 - cpu0) * 1000 / hz)) ms of CPU in ${WAIT_S}s of waiting"

start_job "$NP" -x "SLURM_JOB_ID=$JOB_ID" -- "$TMPD/bin/mpi_phases" --log-dir "$LOGS" \
	--go-file "$GO_FILE" --malloc-mib "$MALLOC_MIB" --mmap-mib "$MMAP_MIB" --plateau-ms 700
wait_tool_ready 30
wait_ranks "$NP" 30
wait_events phases ready "$NP" 30
# Give the tool a moment to meet the ranks that started after its first.
sleep 0.5
check_tool_holds_bpf
start_sampler "$TMPD/sampler.csv"
go
wait_job_ok 60
wait_tool_ok 15 "the job ended"
stop_sampler
check_no_bpf_leftovers
run_checker "$OUT" --ranks "$NP" --sampler "$TMPD/sampler.csv" --phase-dir "$LOGS" \
	--malloc-mib "$MALLOC_MIB" --mmap-mib "$MMAP_MIB" --t-line "$T_LINE"
pass
