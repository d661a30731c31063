#!/bin/bash
# Detach on a signal: attach to a running mpi_hold job, SIGINT the tool;
# then attach again to the same job and SIGTERM it. Each time the tool must
# exit 0 with complete CSVs, leave no ma_* program or link behind, and the
# job must keep running; at the end the job (which checks its own memory
# and keeps calling MPI_Allreduce all along) must exit 0.
source "$(dirname "$0")/lib.sh"

NP=2
HOLD_MIB=16

it_setup
start_job "$NP" -- "$TMPD/bin/mpi_hold" --log-dir "$LOGS" --hold-mib "$HOLD_MIB" \
	--hold-s 120 --tick-ms 50 --stop-file "$STOP_FILE" --go-file "$GO_FILE"
wait_ranks "$NP" 30
wait_events hold ready "$NP" 30

for sig in INT TERM; do
	OUT=$TMPD/out-$sig
	start_tool --job "$MPIRUN_PID" --output "$OUT" --interval 100
	wait_tool_ready 30
	start_sampler "$TMPD/sampler-$sig.csv"
	hold_check=()
	if [ "$sig" = INT ]; then
		# The first run sees the ranks map their memory, so it can tell
		# whose it is; the second attaches late, when the owner of memory
		# mapped earlier is unknowable (unattributed is fair there).
		go
		wait_events hold hold_begin "$NP" 30
		hold_check=(--hold-mib "$HOLD_MIB")
	fi
	check_tool_holds_bpf
	sleep 2
	log "sending SIG$sig to the tool (pid $TOOL_PID)"
	kill "-$sig" "$TOOL_PID"
	wait_tool_ok 10 "SIG$sig"
	stop_sampler
	for r in "${!RANK_PID[@]}"; do
		pid_running "${RANK_PID[$r]}" || fail "rank $r (pid ${RANK_PID[$r]}) died when the tool detached on SIG$sig"
	done
	check_no_bpf_leftovers
	run_checker "$OUT" --ranks "$NP" --sampler "$TMPD/sampler-$sig.csv" "${hold_check[@]}"
done

# Let the job run a little untraced after the last detach, then end it.
sleep 1
touch "$STOP_FILE"
wait_job_ok 30
pass
