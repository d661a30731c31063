#!/bin/bash
# Attach with --job <mpirun pid> to a running 4-rank mpi_phases job owned by
# an unprivileged user. The ranks' memory is known by construction (each rank
# R mallocs (R+1)*8 MiB, mmaps (R+1)*4 MiB, frees, unmaps, with plateaus in
# between), and a /proc sampler records the kernel's VmRSS meanwhile; the
# CSVs are checked against both. The tool must exit 0 by itself once the job
# has ended.
source "$(dirname "$0")/lib.sh"

NP=4
MALLOC_MIB=8
MMAP_MIB=4

it_setup
start_job "$NP" -- "$TMPD/bin/mpi_phases" --log-dir "$LOGS" --go-file "$GO_FILE" \
	--malloc-mib "$MALLOC_MIB" --mmap-mib "$MMAP_MIB" --plateau-ms 800
wait_ranks "$NP" 30
wait_events phases ready "$NP" 30	# attach after MPI_Init: a late attach

OUT=$TMPD/out
start_tool --job "$MPIRUN_PID" --output "$OUT"
wait_tool_ready 30
start_sampler "$TMPD/sampler.csv"
go

wait_job_ok 90
wait_tool_ok 15 "the job ended"
stop_sampler
check_no_bpf_leftovers
run_checker "$OUT" --ranks "$NP" --sampler "$TMPD/sampler.csv" --phase-dir "$LOGS" \
	--malloc-mib "$MALLOC_MIB" --mmap-mib "$MMAP_MIB" --t-line "$T_LINE"
pass
