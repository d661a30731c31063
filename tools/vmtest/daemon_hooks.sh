# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Sourced by the kernel matrix's checks of where the node service's memory
# calls go (vm_daemon_on_demand.sh, vm_fentry_unattachable.sh), after
# tests/integration/lib.sh. The daemon is DAEMON_PID, its stderr ERR.

# until_line REGEX TIMEOUT: until ERR has a line matching REGEX (grep -E);
# fails when the daemon exits first or TIMEOUT seconds pass.
until_line() {
	local t0=$EPOCHREALTIME
	until grep -qE "$1" "$ERR"; do
		pid_running "$DAEMON_PID" || fail "the daemon exited: $(tail -5 "$ERR")"
		elapsed_since "$t0" "$2" && fail "no line '$1' after $2 s: $(tail -5 "$ERR")"
		sleep 0.2
	done
}

# daemon_hooks: the daemon's syscall tracepoints and fentry/fexit links,
# "N M" ("0 22" on fentry, "22 0" on the tracepoints, "0 0" detached).
daemon_hooks() {
	echo "$(syscall_tps "$DAEMON_PID") $(fentry_links "$DAEMON_PID")"
}

# until_detached TIMEOUT: until the daemon holds neither (--detach-after
# after its last job); DETACHED_AFTER: the seconds it took.
until_detached() {
	local t0=$EPOCHREALTIME
	until [ "$(daemon_hooks)" = "0 0" ]; do
		elapsed_since "$t0" "$1" && fail "syscall hooks still held $1 s later: $(daemon_hooks)"
		sleep 0.5
	done
	DETACHED_AFTER=$(seconds_since "$t0")
}

# sleep_job SECS: the test user's sleep of SECS seconds under a new Slurm
# job ID, returning once the daemon traces it: JOB (the ID), J (its pid).
sleep_job() {
	JOB=$((500000 + RANDOM))
	as_user SLURM_JOB_ID="$JOB" sleep "$1" &
	J=$!
	track_pid "$J"
	until_line "job $JOB of " 120
}
