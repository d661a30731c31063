# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Sourced by run.sh: the "daemon" mode and cost variant (issue 34), a job
# traced by the node service as a site leaves it on: `memattr-bpf daemon`
# with its defaults, started before the job (so it sees the ranks from
# their exec), the job carrying a batch job ID as under a scheduler
# (PBS_JOBID: neither launcher acts on it alone). The workload's timed part
# starts once the service traces every rank; the service stops after the
# job, outside the timed part, and the run fails unless its spool holds
# every rank's timeline.

# daemon_start: the node service, /metrics on a loopback port.
daemon_start() {
	DAEMON_PORT=$((20000 + RANDOM % 20000))
	TOOL_CMD="memattr-bpf daemon --spool $RD/spool --listen 127.0.0.1:$DAEMON_PORT (its defaults)"
	"$TOOL" daemon --spool "$RD/spool" --listen "127.0.0.1:$DAEMON_PORT" \
		>"$RD/tool.out" 2>"$RD/tool.err" &
	TOOL_PID=$!
	track_pid "$TOOL_PID"
	local t0=$EPOCHREALTIME
	until curl -sf -o /dev/null "http://127.0.0.1:$DAEMON_PORT/metrics"; do
		pid_running "$TOOL_PID" || { RUN_ERR="the daemon exited: $(tail -2 "$RD/tool.err" | tr '\n' ' ')"; return 1; }
		elapsed_since "$t0" 120 && { RUN_ERR="the daemon's /metrics did not answer in 120 s"; return 1; }
		sleep 0.1
	done
	JOB_ENV=(PBS_JOBID="bench.$$.$RANDOM")
}

# daemon_wait_traced NP: until the service traces at least NP processes.
daemon_wait_traced() {
	local np=$1 t0=$EPOCHREALTIME n
	while :; do
		n=$(curl -sf "http://127.0.0.1:$DAEMON_PORT/metrics" | awk '$1 == "memattr_processes" { print $2 }')
		[ "${n:-0}" -ge "$np" ] && return 0
		elapsed_since "$t0" 60 && { RUN_ERR="the daemon traced ${n:-0} of $np processes after 60 s"; return 1; }
		sleep 0.05
	done
}

# daemon_stop NP: stop the service; its spool must hold NP rank timelines.
daemon_stop() {
	local np=$1 n
	is_ours_running "$TOOL_PID" && kill -TERM "$TOOL_PID" 2>/dev/null
	wait_gone "$TOOL_PID" 60 || stop_pid "$TOOL_PID" 0
	TOOL_PID=""
	JOB_ENV=()
	n=$(find "$RD/spool" \( -name 'rank-*.csv*' -o -name 'pid-*.csv*' \) 2>/dev/null | wc -l)
	[ "$n" -ge "$np" ] || { RUN_ERR="the daemon's spool holds $n timelines, not $np"; return 1; }
}
