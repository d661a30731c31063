#!/bin/bash
# The opt-in modes' detach: attach with --mpi-calls --heap to a running
# mpi_hold job (found by -x SLURM_JOB_ID), whose ranks call MPI_Allreduce and
# MPI_Bcast every 50 ms, then SIGINT the tool. It must exit 0 with its CSVs
# complete (mpi_calls.csv counting both calls on every rank, as often as each
# other), leave no ma_* program or link behind (its uprobe_multi links
# included, and the MPI_Init probes it places in every process that maps the
# MPI library), and the job must run on and exit 0.
source "$(dirname "$0")/lib.sh"

NP=2
HOLD_MIB=8
JOB_ID=$((600000 + RANDOM * 32 + RANDOM % 32))

it_setup
start_job "$NP" -x "SLURM_JOB_ID=$JOB_ID" -- "$TMPD/bin/mpi_hold" --log-dir "$LOGS" \
	--hold-mib "$HOLD_MIB" --hold-s 120 --tick-ms 50 --stop-file "$STOP_FILE" --go-file "$GO_FILE"
wait_ranks "$NP" 30
wait_events hold ready "$NP" 30

OUT=$TMPD/out
start_tool --job "$JOB_ID" --output "$OUT" --mpi-calls --heap
wait_tool_ready 30
check_tool_holds_bpf
"$PY" "$IT_DIR/bpf_leftovers.py" --links-held-by "$TOOL_PID" uprobe_multi ||
	fail "the tool traces with --mpi-calls --heap but holds no uprobe_multi link"
start_sampler "$TMPD/sampler.csv"
go
wait_events hold hold_begin "$NP" 30
sleep 2
log "sending SIGINT to the tool (pid $TOOL_PID)"
kill -INT "$TOOL_PID"
wait_tool_ok 10 "SIGINT"
stop_sampler
check_no_bpf_leftovers
for r in "${!RANK_PID[@]}"; do
	pid_running "${RANK_PID[$r]}" || fail "rank $r (pid ${RANK_PID[$r]}) died when the probes were removed"
done
run_checker "$OUT" --ranks "$NP" --sampler "$TMPD/sampler.csv" --hold-mib "$HOLD_MIB"
for f in mpi_calls.csv heap_sites.csv; do
	[ -s "$OUT/$f" ] || fail "no $f after SIGINT with --mpi-calls --heap"
done
log "checking mpi_calls.csv"
"$PY" - "$OUT/mpi_calls.csv" "$NP" <<'PYEOF' || fail "mpi_calls.csv does not count the job's MPI calls (above)"
import csv, sys
path, np = sys.argv[1], int(sys.argv[2])
calls = {}
for row in csv.DictReader(open(path, newline="")):
    calls[(int(row["rank"]), row["function"])] = int(row["calls"])
bad = 0
for r in range(np):
    a, b = calls.get((r, "MPI_Allreduce"), 0), calls.get((r, "MPI_Bcast"), 0)
    print(f"rank {r}: MPI_Allreduce {a} calls, MPI_Bcast {b} calls")
    # mpi_hold calls each once a tick (plus one Allreduce first); ~2 s at 50 ms.
    if a < 10 or b < 10 or abs(a - b) > 2:
        print(f"FAIL: rank {r}: expected >= 10 of each and as many of one as of the other")
        bad += 1
sys.exit(1 if bad else 0)
PYEOF

# Untraced again: the job keeps calling MPI for a while, then ends cleanly.
sleep 1
touch "$STOP_FILE"
wait_job_ok 30
pass
