#!/bin/bash
# Processes that exit keep their data: in a 2-rank mpi_child job attached by
# --job before the go, each rank forks a child (not an MPI rank, though it
# inherits the rank's environment) that holds (R+1)*N MiB for a while and
# exits long before the job does. The tool must pick each child up, keep
# its timeline in its own pid-<P>.csv (the rank files keep one pid each:
# two processes are never merged), with the child's memory in it (app) up
# to its exit, and its peak in summary.csv after it is gone. The child
# allocates 300 ms after the fork (test_child_early_alloc covers memory a
# child asks for at once).
source "$(dirname "$0")/lib.sh"

NP=2
CHILD_MIB=8
JOB_ID=$((900000 + RANDOM * 32 + RANDOM % 32))

it_setup
start_job "$NP" -x "SLURM_JOB_ID=$JOB_ID" -- "$TMPD/bin/mpi_child" --log-dir "$LOGS" \
	--go-file "$GO_FILE" --child-mib "$CHILD_MIB" --child-ms 1500 --plateau-ms 800 \
	--child-delay-ms "${CHILD_DELAY_MS:-300}" --child-steps "${CHILD_STEPS:-1}" \
	--commands "${CHILD_COMMANDS:-0}"
wait_ranks "$NP" 30
wait_events child ready "$NP" 30

OUT=$TMPD/out
start_tool --job "$JOB_ID" --output "$OUT" ${TOOL_ARGS[@]+"${TOOL_ARGS[@]}"}
wait_tool_ready 30
start_sampler "$TMPD/sampler.csv"
go
wait_job_ok 60
wait_tool_ok 15 "the job ended"
stop_sampler
check_no_bpf_leftovers
run_checker "$OUT" --ranks "$NP" --sampler "$TMPD/sampler.csv"
log "checking the exited children's files: check_exited.py"
"$PY" "$IT_DIR/check_exited.py" "$OUT" --ranks "$NP" --log-dir "$LOGS" --child-mib "$CHILD_MIB" --child-ms 1500 ||
	fail "the exited children's data is missing or wrong (above)"
if [ -n "${EXTRA_CHECK:-}" ]; then
	"$EXTRA_CHECK"
fi
pass
