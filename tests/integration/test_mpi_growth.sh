#!/bin/bash
# Which MPI function made the library grow, in the default mode (issue 10):
# no probe at all. `memattr-bpf -- mpirun ... mpi_truth` with MPI_Init
# called at once (the case --mpi-calls' probes, placed 10-20 ms after a
# rank starts, can miss). mpi_calls.csv must be written with growth per
# function found from the stack at each memory request: MPI_Alloc_mem's
# block exactly ((R+1)*2U MiB), its release exactly (charged to MPI_Alloc_mem:
# without probes a release goes to the function that asked), and
# MPI_Init's growth at least a quarter of what the kernel says MPI_Init added to
# the rank's VmRSS (the workload reads its statm around MPI_Init), never
# more; calls are not counted without probes (empty field); no probe is
# attached (no uprobe link while the job runs); the report shows the table.
source "$(dirname "$0")/lib.sh"

NP=2
UNIT_MIB=2

it_setup
OUT=$TMPD/out
launch_under_tool "$OUT" "$NP" -- "$TMPD/bin/mpi_truth" --log-dir "$LOGS" --go-file "$GO_FILE" \
	--unit-mib "$UNIT_MIB" --plateau-ms 400
wait_ranks "$NP" 30
wait_events truth ready "$NP" 30
! "$PY" "$IT_DIR/bpf_leftovers.py" --links-held-by "$TOOL_PID" uprobe_multi >/dev/null ||
	fail "the tool holds uprobe links in the default mode"
"$PY" "$IT_DIR/bpf_leftovers.py" --links-held-by "$TOOL_PID" >/dev/null ||
	fail "the tool holds no link at all: the check above could not see one"
go

wait_tool_ok 120 "the launched job ended"
check_no_bpf_leftovers
log "checking mpi_calls.csv: check_modes.py --default-mode"
"$PY" "$IT_DIR/check_modes.py" "$OUT" --ranks "$NP" --unit-mib "$UNIT_MIB" --default-mode \
	--log-dir "$LOGS" || fail "mpi_calls.csv differs from the workload (above)"
"$MEMATTR_BIN" report "$OUT" >/dev/null || fail "report refuses the default mode's mpi_calls.csv"
grep -q 'Which MPI calls made the library grow' "$OUT/report.html" && grep -q '<code>MPI_Alloc_mem</code>' "$OUT/report.html" ||
	fail "report.html has no MPI function table"
pass
