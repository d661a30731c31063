# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Sourced by run.sh: the "costs" section (issue 11), what memattr-bpf costs
# per event, to the processes it traces and to those it does not:
#   - a page-fault storm (1 and 8 threads) alone and beside a tool tracing
#     an idle process (the untraced neighbour), and traced itself;
#   - a syscall that is not a memory request (getppid), alone, beside and traced;
#   - memory requests (a heap grown and trimmed every iteration), untraced and traced;
#   - a fork/exec-heavy job (system() in every rank), untraced and in every mode;
#   - the storm and the fork/exec job traced by the node service (daemon_mode.sh);
#   - the BPF time of each program per event (kernel.bpf_stats_enabled, in
#     runs of their own: the accounting slows what it measures);
#   - attaching and detaching --heap --mpi-calls on 8 ranks, and a SIGINT
#     half a second after start.
# Figures go to costs.tsv (item, variant, rep, value, unit), bpfstats.tsv
# and attach.tsv; report.py turns them into "Cost per event".

COST_REPS=${BENCH_COST_REPS:-$([ "$QUICK" = 1 ] && echo 1 || echo 5)}
COST_SECONDS=$([ "$QUICK" = 1 ] && echo 1 || echo 3)
FORKEXEC_N=$([ "$QUICK" = 1 ] && echo 30 || echo 100)

# cost_result FILE: the number on the workload's RESULT line.
cost_result() { awk '/^RESULT/ { print $3; exit }' "$1"; }

# cost_tool_beside: a tool tracing an idle process of its own (TOOL_IDLE).
cost_tool_beside() {
	sleep 600 &
	TOOL_IDLE=$!
	track_pid "$TOOL_IDLE"
	start_memattr --pid "$TOOL_IDLE"
	wait_memattr_ready 120
}

# The idle process ends first: the tool then exits by itself (flush, detach).
cost_tool_stop() {
	if [ -n "${TOOL_IDLE:-}" ]; then
		kill "$TOOL_IDLE" 2>/dev/null || true
		wait "$TOOL_IDLE" 2>/dev/null || true
		TOOL_IDLE=""
	fi
	stop_memattr
}

# cost_one ITEM VARIANT REP NP BIN ARGS...: run one workload under VARIANT
# (untraced | beside | traced | traced:FLAGS), record its RESULT in costs.tsv.
cost_one() {
	local item=$1 variant=$2 rep=$3 np=$4 v flags=""
	shift 4
	W_BIN=$1
	shift
	W_ARGS=("$@")
	W_MPI=$([ "$np" -gt 1 ] && echo 1 || echo 0)
	WRAP=() MPIOPTS=() RUN_ERR="" TOOL_IDLE="" TOOL_PID=""
	new_run_dir "costs.$item.$variant.$rep"
	JOB_ENV=()
	case $variant in
	beside) cost_tool_beside || { record_fail costs "$item $variant" "$rep"; return; } ;;
	daemon) daemon_start || { record_fail costs "$item $variant" "$rep"; return; } ;;
	traced:*) flags=${variant#traced:} ;;
	esac
	launch_job "$np" --ready-dir "$RD/ready" --go-file "$RD/go"
	if ! wait_ready "$np" 120; then
		cost_tool_stop
		record_fail costs "$item $variant" "$rep"
		return
	fi
	if [ "$variant" = daemon ] && ! daemon_wait_traced "$np"; then
		record_fail costs "$item $variant" "$rep"
		return
	fi
	if [ "$variant" = traced ] || [ -n "$flags" ]; then
		# shellcheck disable=SC2086 # flags are words
		if [ "$np" -gt 1 ]; then
			start_memattr --job "$(ppid_of "${READY_PIDS[0]}")" $flags
		else
			start_memattr --pid "${READY_PIDS[0]}" $flags
		fi
		wait_memattr_ready 120 || { record_fail costs "$item $variant" "$rep"; return; }
	fi
	echo "$JOB_CMD   ||   ${TOOL_CMD:-untraced}" >"$RES/costs.$item.$variant.cmd"
	touch "$RD/go"
	wait_gone "$JOB_PID" 300 || true
	if [ "$variant" = daemon ]; then
		daemon_stop "$np" || { record_fail costs "$item $variant" "$rep"; return; }
	elif [ -n "$TOOL_PID" ]; then
		cost_tool_stop
	fi
	v=$(cost_result "$RD/job.out")
	if [ -z "$v" ]; then
		RUN_ERR="no RESULT line"
		record_fail costs "$item $variant" "$rep"
		return
	fi
	printf '%s\t%s\t%s\t%s\n' "$item" "$variant" "$rep" "$v" >>"$RES/costs.tsv"
	# The workload's own CPU time per unit, where it gives it: item "<item>cpu".
	v=$(awk '/^CPU ns_per_unit/ { print $3; exit }' "$RD/job.out")
	[ -n "$v" ] && printf '%s\t%s\t%s\t%s\n' "${item}cpu" "$variant" "$rep" "$v" >>"$RES/costs.tsv"
	TOOL_CMD=""
}

# cost_bpfstats SCENARIO BIN ARGS...: one run of a single-process workload
# with BPF run-time accounting on, per program of the tool: beside the tool
# (SCENARIO neighbour*) or traced by it. The tool also traces an idle
# process, so it is still there to be read when the workload has ended.
cost_bpfstats() {
	local scen=$1 units
	shift
	W_BIN=$1
	shift
	W_ARGS=("$@")
	W_MPI=0 WRAP=() MPIOPTS=() RUN_ERR="" TOOL_IDLE="" TOOL_PID=""
	new_run_dir "bpfstats.$scen"
	launch_job 1 --ready-dir "$RD/ready" --go-file "$RD/go"
	wait_ready 1 120 || { record_fail bpfstats "$scen" 0; return; }
	sleep 600 &
	TOOL_IDLE=$!
	track_pid "$TOOL_IDLE"
	case $scen in
	neighbour*) start_memattr --pid "$TOOL_IDLE" ;;
	*) start_memattr --pid "${READY_PIDS[0]},$TOOL_IDLE" ;;
	esac
	wait_memattr_ready 120 || { cost_tool_stop; record_fail bpfstats "$scen" 0; return; }
	echo "$JOB_CMD   ||   $TOOL_CMD" >"$RES/bpfstats.$scen.cmd"
	sysctl -q kernel.bpf_stats_enabled=1
	"$PY" "$BENCH_DIR/bpfstats.py" snap "$TOOL_PID" >"$RD/before.json"
	touch "$RD/go"
	wait_gone "$JOB_PID" 300 || true
	"$PY" "$BENCH_DIR/bpfstats.py" snap "$TOOL_PID" >"$RD/after.json"
	sysctl -q kernel.bpf_stats_enabled=0
	cost_tool_stop
	# Units of work the workload did: pages, syscalls or iterations.
	units=$(awk '/^INFO units/ { print $3; exit }' "$RD/job.out")
	"$PY" "$BENCH_DIR/bpfstats.py" diff "$RD/before.json" "$RD/after.json" |
		while IFS=$'\t' read -r prog calls ns; do
			printf '%s\t%s\t%s\t%s\t%s\n' "$scen" "$prog" "$calls" "$ns" "${units:-0}"
		done >>"$RES/bpfstats.tsv"
}

# Attach and detach --heap --mpi-calls on 8 ranks of hold; then a SIGINT
# 0.5 s after start: how long until the tool has exited, and whether every
# rank's timeline has rows (not just a header).
cost_attach() {
	local rep=$1 t0 attach detach rows early
	W_BIN=hold W_ARGS=(--mib "$HOLD_MIB") W_MPI=1 WRAP=() MPIOPTS=() RUN_ERR="" TOOL_PID=""
	new_run_dir "costs.attach.$rep"
	launch_job 8 --ready-dir "$RD/ready" --stop-file "$RD/stop"
	wait_ready 8 300 || { record_fail costs attach "$rep"; return; }
	start_memattr --job "$(ppid_of "${READY_PIDS[0]}")" --heap --mpi-calls
	wait_memattr_ready 120 || { record_fail costs attach "$rep"; return; }
	attach=$TOOL_STARTUP_S
	sleep 2
	t0=$EPOCHREALTIME
	kill -INT "$TOOL_PID"
	wait_gone "$TOOL_PID" 120 || true
	detach=$(seconds_since "$t0")
	stop_memattr
	# Early SIGINT: half a second after the tool started, attach in progress.
	mv "$RD/out" "$RD/out.attach"
	start_memattr --job "$(ppid_of "${READY_PIDS[0]}")" --heap --mpi-calls
	sleep 0.5
	t0=$EPOCHREALTIME
	kill -INT "$TOOL_PID"
	wait_gone "$TOOL_PID" 120 || true
	early=$(seconds_since "$t0")
	stop_memattr
	rows=0
	for f in "$RD"/out/rank-*.csv; do
		[ -f "$f" ] && [ "$(wc -l <"$f")" -gt 1 ] && rows=$((rows + 1))
	done
	touch "$RD/stop"
	wait_gone "$JOB_PID" 120 || true
	echo "$JOB_CMD   ||   $TOOL_CMD" >"$RES/costs.attach.cmd"
	printf '%s\t%s\t%s\t%s\t%s\n' "$rep" "$attach" "$detach" "$early" "$rows" >>"$RES/attach.tsv"
}

# 64 ranks of hold with --heap --mpi-calls attached: when the first sample
# came (the first row's time in rank 0's timeline), events dropped, attach time.
cost_attach64() {
	local first drops
	W_BIN=hold W_ARGS=(--mib 4) W_MPI=1 WRAP=() MPIOPTS=() RUN_ERR="" TOOL_PID=""
	new_run_dir "costs.attach64"
	launch_job 64 --ready-dir "$RD/ready" --stop-file "$RD/stop"
	wait_ready 64 600 || { record_fail costs attach64 0; return; }
	start_memattr --job "$(ppid_of "${READY_PIDS[0]}")" --heap --mpi-calls
	wait_memattr_ready 300 || { record_fail costs attach64 0; return; }
	sleep 5
	kill -INT "$TOOL_PID"
	wait_gone "$TOOL_PID" 120 || true
	stop_memattr
	touch "$RD/stop"
	wait_gone "$JOB_PID" 300 || true
	first=$(awk -F, 'NR == 2 { print $1; exit }' "$RD/out/rank-0.csv" 2>/dev/null)
	drops=$(awk -F, '$1 == "dropped_events" { print $2 }' "$RD/out/run_info.csv" 2>/dev/null)
	echo "$JOB_CMD   ||   $TOOL_CMD" >"$RES/costs.attach64.cmd"
	printf 'attach_s\tfirst_sample_s\tdropped\n%s\t%s\t%s\n' "$TOOL_STARTUP_S" "${first:-?}" "${drops:-?}" \
		>"$RES/attach64.tsv"
}

# rotated K WORD...: the words, the first K mod n moved to the end. A
# repetition's variants run back to back; rotating their order each
# repetition keeps what one run leaves behind (the previous tool's detach,
# which the kernel finishes in the background, the page cache, the
# allocator's free lists) from always falling on the same variant.
rotated() {
	local k=$1 i
	shift
	for ((i = 0; i < $#; i++)); do
		local j=$(((i + k) % $# + 1))
		echo "${!j}"
	done
}

section_costs() {
	local r s
	printf 'item\tvariant\trep\tvalue\n' >"$RES/costs.tsv"
	printf 'scenario\tprogram\tcalls\trun_ns\tunits\n' >"$RES/bpfstats.tsv"
	printf 'rep\tattach_s\tdetach_s\tearly_sigint_exit_s\tranks_with_rows\n' >"$RES/attach.tsv"
	for ((r = 0; r < COST_REPS; r++)); do
		TRACK_MARK=${#TRACKED[@]}
		log "costs: repetition $((r + 1)) of $COST_REPS"
		for s in $(rotated "$r" untraced beside traced daemon); do
			cost_one storm1 "$s" "$r" 1 storm --rate 0 --seconds "$COST_SECONDS" --mib 64
		done
		for s in $(rotated "$r" untraced beside); do
			cost_one storm8 "$s" "$r" 1 storm --rate 0 --seconds "$COST_SECONDS" --mib 16 --threads 8
		done
		for s in $(rotated "$r" untraced beside traced); do
			cost_one syscall "$s" "$r" 1 sysloop --seconds "$COST_SECONDS"
		done
		for s in $(rotated "$r" untraced traced); do
			cost_one memreq "$s" "$r" 1 memreq --seconds "$COST_SECONDS"
		done
		for s in $(rotated "$r" untraced traced "traced:--heap" "traced:--mpi-calls" daemon); do
			cost_one forkexec "$s" "$r" 4 forkexec --n "$FORKEXEC_N"
		done
	done
	log "costs: BPF time per program"
	cost_bpfstats neighbour1 storm --rate 0 --seconds "$COST_SECONDS" --mib 64
	cost_bpfstats neighbour8 storm --rate 0 --seconds "$COST_SECONDS" --mib 16 --threads 8
	cost_bpfstats storm storm --rate 0 --seconds "$COST_SECONDS" --mib 64
	cost_bpfstats syscall sysloop --seconds "$COST_SECONDS"
	cost_bpfstats memreq memreq --seconds "$COST_SECONDS"
	for ((r = 0; r < (QUICK == 1 ? 1 : 3); r++)); do
		log "costs: attach and detach, 8 ranks, --heap --mpi-calls ($((r + 1)))"
		cost_attach "$r"
	done
	log "costs: 64 ranks, --heap --mpi-calls"
	cost_attach64
}
