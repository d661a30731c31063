#!/bin/bash
# The opt-in modes on a job traced from its launch: `memattr-bpf --mpi-calls
# --heap -- mpirun ... mpi_truth`. MPI_Init and MPI_Alloc_mem growth per
# rank in mpi_calls.csv, exact bytes per call site in heap_sites.csv, the
# default attribution still right with the probes in place, and nothing
# left attached afterwards. The ranks spend 300 ms before MPI_Init (as a
# code reading its input does): the kernel takes 10-20 ms to place probes,
# and an MPI_Init in a rank's first milliseconds can escape them (docs/user-guide.md, "Opt-in modes").
source "$(dirname "$0")/lib.sh"

NP=2
UNIT_MIB=1

it_setup
OUT=$TMPD/out
launch_under_tool "$OUT" "$NP" --mpi-calls --heap -- "$TMPD/bin/mpi_truth" --log-dir "$LOGS" \
	--go-file "$GO_FILE" --unit-mib "$UNIT_MIB" --plateau-ms 600 --setup-ms 300
wait_ranks "$NP" 30
wait_events truth ready "$NP" 30
check_tool_holds_bpf
start_sampler "$TMPD/sampler.csv"
go

wait_tool_ok 120 "the launched job ended"
stop_sampler
check_no_bpf_leftovers
run_checker "$OUT" --ranks "$NP" --sampler "$TMPD/sampler.csv"
"$PY" "$IT_DIR/check_truth.py" "$OUT" --ranks "$NP" --sampler "$TMPD/sampler.csv" \
	--log-dir "$LOGS" --t-line "$T_LINE" || fail "attribution with the probes in place differs from the truth"
log "checking the modes' files: check_modes.py"
"$PY" "$IT_DIR/check_modes.py" "$OUT" --ranks "$NP" --unit-mib "$UNIT_MIB" ||
	fail "mpi_calls.csv / heap_sites.csv differ from the workload (above)"
pass
