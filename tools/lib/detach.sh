# shellcheck shell=bash
# Sourced by tools/bench/run.sh and tools/validate/run.sh: measurements that
# follow a run of the tool wait for the kernel to have detached it.

# wait_detached TIMEOUT_S: until no memattr-bpf program (ma_*) is loaded. The
# kernel finishes a tool's detach after the tool has exited (about a second
# of grace periods, and code patching that interrupts every CPU); a run
# measured beside it is slowed, and one variant of a pair always would be.
# Another tool on the machine keeps its programs: after TIMEOUT_S, one line
# says so and the measurement goes on.
wait_detached() {
	local i
	for ((i = 0; i < $1 * 20; i++)); do
		# No pipe: under pipefail, grep -q leaving early fails the pipeline.
		[[ $(bpftool prog show 2>/dev/null) == *" name ma_"* ]] || return 0
		sleep 0.05
	done
	echo "wait_detached: memattr-bpf programs still loaded after $1 s (another tool running?)" >&2
}
