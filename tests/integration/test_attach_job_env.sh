#!/bin/bash
# Attach by batch job id: a 2-rank mpi_phases job launched with
# -x SLURM_JOB_ID=<random>, as a scheduler would set it; memattr-bpf
# --job <that id> must find the ranks by their environment alone.
source "$(dirname "$0")/lib.sh"

NP=2
MALLOC_MIB=16
MMAP_MIB=8
ALLOC_MEM_MIB=4		# MPI_Alloc_mem: the MPI library's memory
JOB_ID=$((100000 + RANDOM * 32 + RANDOM % 32))

it_setup
start_job "$NP" -x "SLURM_JOB_ID=$JOB_ID" -- "$TMPD/bin/mpi_phases" --log-dir "$LOGS" \
	--go-file "$GO_FILE" --malloc-mib "$MALLOC_MIB" --mmap-mib "$MMAP_MIB" --alloc-mem-mib "$ALLOC_MEM_MIB" --plateau-ms 800
wait_ranks "$NP" 30
wait_events phases ready "$NP" 30
for r in "${!RANK_PID[@]}"; do
	tr '\0' '\n' <"/proc/${RANK_PID[$r]}/environ" | grep -qx "SLURM_JOB_ID=$JOB_ID" ||
		fail "rank $r lacks SLURM_JOB_ID=$JOB_ID in its environment (mpirun -x did not pass it)"
done

OUT=$TMPD/out
start_tool --job "$JOB_ID" --output "$OUT"
wait_tool_ready 30
start_sampler "$TMPD/sampler.csv"
go

wait_job_ok 90
wait_tool_ok 15 "the job ended"
stop_sampler
check_no_bpf_leftovers
run_checker "$OUT" --ranks "$NP" --sampler "$TMPD/sampler.csv" --phase-dir "$LOGS" \
	--malloc-mib "$MALLOC_MIB" --mmap-mib "$MMAP_MIB" --alloc-mem-mib "$ALLOC_MEM_MIB" \
	--t-line "$T_LINE"
pass
