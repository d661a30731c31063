#!/bin/bash
# SIGKILL of the tool while it traces: nothing can flush or detach, so the
# kernel must drop every ma_* program and link when the dead tool's
# descriptors close. Two rounds on one running mpi_hold job: the default mode
# (tracepoints), then --mpi-calls --heap (uprobe_multi links, including the
# MPI_Init probes placed in every process that maps the MPI library). After
# each kill, bpf_leftovers.py must show nothing within 3 s, the ranks keep
# running (calling MPI_Allreduce every 50 ms), and at the end the job, which
# checks its own memory, exits 0.
source "$(dirname "$0")/lib.sh"

NP=2
HOLD_MIB=8
JOB_ID=$((500000 + RANDOM * 32 + RANDOM % 32))

it_setup
start_job "$NP" -x "SLURM_JOB_ID=$JOB_ID" -- "$TMPD/bin/mpi_hold" --log-dir "$LOGS" \
	--hold-mib "$HOLD_MIB" --hold-s 120 --tick-ms 50 --stop-file "$STOP_FILE" --go-file "$GO_FILE"
wait_ranks "$NP" 30
wait_events hold ready "$NP" 30
go
wait_events hold hold_begin "$NP" 30

round=0
for mode in default probes; do
	round=$((round + 1))
	args=(--job "$JOB_ID" --output "$TMPD/out-$mode")
	[ "$mode" = probes ] && args+=(--mpi-calls --heap)
	start_tool "${args[@]}"
	wait_tool_ready 30
	check_tool_holds_bpf
	if [ "$mode" = probes ]; then
		"$PY" "$IT_DIR/bpf_leftovers.py" --links-held-by "$TOOL_PID" uprobe_multi ||
			fail "the tool traces with --mpi-calls --heap but holds no uprobe_multi link"
	else
		"$PY" "$IT_DIR/bpf_leftovers.py" --links-held-by "$TOOL_PID" ||
			fail "the tool holds no BPF link"
	fi
	sleep 1.5
	log "round $round ($mode): sending SIGKILL to the tool (pid $TOOL_PID)"
	kill -KILL "$TOOL_PID"
	wait_exit "$TOOL_PID" 10 || fail "the tool survived SIGKILL for 10 s"
	[ "$WAIT_RC" -eq 137 ] || fail "tool exit status $WAIT_RC after SIGKILL, expected 137"
	wait_no_bpf_leftovers 3
	log "no ma_* program or link left ${LEFTOVERS_GONE_AFTER}s after the tool died"
	for r in "${!RANK_PID[@]}"; do
		pid_running "${RANK_PID[$r]}" || fail "rank $r (pid ${RANK_PID[$r]}) died with the tool ($mode)"
	done
	# The job goes on untraced (its Allreduce checksums still agree).
	sleep 1
	for r in "${!RANK_PID[@]}"; do
		pid_running "${RANK_PID[$r]}" || fail "rank $r died after the tool was killed ($mode)"
	done
done

touch "$STOP_FILE"
wait_job_ok 30
check_no_bpf_leftovers
pass
