# shellcheck shell=bash
# Processes a script started, tracked by pid and start time, so only they
# are ever signalled: a recycled pid is never killed by mistake, and nothing
# is killed by name. Sourced by tests/integration/lib.sh and tools/bench/run.sh.
TRACKED=()

# Field 22 of /proc/PID/stat (start time in ticks): with the pid it names a
# process uniquely.
pid_starttime() {
	local s
	s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	s=${s##*) }
	# shellcheck disable=SC2086
	set -- $s
	echo "${20}"
}

# Running = exists and is not a zombie (an exited child not yet waited for).
pid_running() {
	local s
	s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	s=${s##*) }
	[ "${s%% *}" != Z ]
}

ppid_of() {
	local s
	s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	s=${s##*) }
	# shellcheck disable=SC2086
	set -- $s
	echo "$2"
}

track_pid() {
	local st
	st=$(pid_starttime "$1") || return 0
	TRACKED+=("$1:$st")
}

# Still the process we started (same pid and start time) and not a zombie.
is_ours_running() {
	local entry
	for entry in "${TRACKED[@]}"; do
		if [ "${entry%%:*}" = "$1" ]; then
			pid_running "$1" && [ "$(pid_starttime "$1")" = "${entry#*:}" ] && return 0
		fi
	done
	return 1
}

# Signal every tracked process that is still the one we started, newest first.
signal_tracked() {
	local sig=$1 i entry pid
	for ((i = ${#TRACKED[@]} - 1; i >= 0; i--)); do
		entry=${TRACKED[i]}
		pid=${entry%%:*}
		if pid_running "$pid" && [ "$(pid_starttime "$pid")" = "${entry#*:}" ]; then
			kill "-$sig" "$pid" 2>/dev/null || true
		fi
	done
}

any_tracked_running() {
	local entry pid
	for entry in "${TRACKED[@]}"; do
		pid=${entry%%:*}
		if pid_running "$pid" && [ "$(pid_starttime "$pid")" = "${entry#*:}" ]; then
			return 0
		fi
	done
	return 1
}

# descendants PID: every process below PID (children of all its threads).
descendants() {
	local queue=("$1") p c
	while [ ${#queue[@]} -gt 0 ]; do
		p=${queue[0]}
		queue=("${queue[@]:1}")
		for c in $(cat /proc/"$p"/task/*/children 2>/dev/null); do
			echo "$c"
			queue+=("$c")
		done
	done
}
