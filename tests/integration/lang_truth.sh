# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Ground truth of a workload that writes PREFIX-rank-R.csv and
# expect-rank-R.csv (mpi_truth, mpi_cxx, mpi_ftn), checked both ways a user
# runs the tool: attached late (--job, after MPI_Init) and launched under it
# (-- mpirun). Source after lib.sh and it_setup.
#
#   truth_attached NP PREFIX TOL PROG ARGS...   (ARGS may use @LOGS@, @GO@)
#   truth_launched NP PREFIX TOL PROG ARGS...
# Both pass the tool the options in TOOL_ARGS, if set, and check_truth.py
# those in TRUTH_CHECK_ARGS (--absolute).
# truth_attached is truth_start_job (the job, up to its ready line; extra
# launcher options in TRUTH_MPIRUN_ARGS) then truth_attach_check (attach by
# --job, release the job, check), so a test can look at the running ranks
# in between (expect_libc_hooks).
# A fresh log directory for each run: the expect files are per run.

fresh_logs() {
	LOGS=$TMPD/logs.$1
	install -d -o "$TEST_USER" -g "$(id -g "$TEST_USER")" "$LOGS"
	GO_FILE=$LOGS/go
}

truth_check() {
	local np=$1 prefix=$2 tol=$3 out=$4
	run_checker "$out" --ranks "$np" --sampler "$TMPD/sampler.csv"
	log "checking attribution: check_truth.py --prefix $prefix --tol $tol"
	"$PY" "$IT_DIR/check_truth.py" "$out" --ranks "$np" --sampler "$TMPD/sampler.csv" \
		--log-dir "$LOGS" --prefix "$prefix" --tol "$tol" --t-line "$T_LINE" \
		${TRUTH_CHECK_ARGS[@]+"${TRUTH_CHECK_ARGS[@]}"} ||
		fail "attribution differs from the ground truth (above)"
	log "run_info: $(grep -E '^(memory_requests|unwind_failures|unwind_fallbacks|unwind_us_per_request),' "$out/run_info.csv" | tr '\n' ' ')"
}

# The program and its arguments, with @LOGS@ and @GO@ replaced.
expand_args() {
	EXPANDED=()
	local a
	for a in "$@"; do
		a=${a//@LOGS@/$LOGS}
		EXPANDED+=("${a//@GO@/$GO_FILE}")
	done
}

# The job ID reaches the ranks the way each launcher passes environment:
# Open MPI's -x; for hydra, the launcher's own environment (as in a batch
# job), so launcher and proxy carry it too and must be followed, not written.
truth_start_job() {
	local np=$1 prefix=$2
	shift 2
	TRUTH_JOB=$((400000 + RANDOM * 32 + RANDOM % 32))
	fresh_logs attached
	expand_args "$@"
	if [ "$IT_MPI" = mpich ]; then
		AS_USER+=("SLURM_JOB_ID=$TRUTH_JOB")
		start_job "$np" "${TRUTH_MPIRUN_ARGS[@]}" -- "${EXPANDED[@]}"
	else
		start_job "$np" "${TRUTH_MPIRUN_ARGS[@]}" -x "SLURM_JOB_ID=$TRUTH_JOB" -- "${EXPANDED[@]}"
	fi
	wait_ranks "$np" 30
	wait_events "$prefix" ready "$np" 30
}

truth_attach_check() {
	local np=$1 prefix=$2 tol=$3
	local out=$TMPD/out.attached extra
	start_tool --job "$TRUTH_JOB" --output "$out" ${TOOL_ARGS[@]+"${TOOL_ARGS[@]}"}
	wait_tool_ready 30
	[ -z "${TRUTH_TOOL_CHECK:-}" ] || $TRUTH_TOOL_CHECK
	start_sampler "$TMPD/sampler.csv"
	go
	wait_job_ok 120
	wait_tool_ok 15 "the job ended"
	stop_sampler
	check_no_bpf_leftovers
	# Launchers and proxies that carry the job's ID are followed, never written.
	extra=$(cd "$out" && ls pid-*.csv 2>/dev/null || true)
	[ -z "$extra" ] || fail "processes that are not ranks were accounted: $extra"
	truth_check "$np" "$prefix" "$tol" "$out"
}

truth_attached() {
	local np=$1 prefix=$2 tol=$3
	shift 3
	truth_start_job "$np" "$prefix" "$@"
	truth_attach_check "$np" "$prefix" "$tol"
}

# expect_libc_hooks FN=LIB...: in every rank, libc's FN jumps into LIB (a
# memory interposer's hook is really in place: libc_hooks.py reads the code).
expect_libc_hooks() {
	local r pair fn lib
	for r in "${!RANK_PID[@]}"; do
		"$PY" "$IT_DIR/libc_hooks.py" "${RANK_PID[$r]}" "${@%%=*}" >"$TMPD/hooks.$r" ||
			fail "rank $r: libc's memory calls are not hooked: $(cat "$TMPD/hooks.$r")"
		for pair in "$@"; do
			fn=${pair%%=*}
			lib=${pair#*=}
			grep -q "^$fn -> .*/$lib" "$TMPD/hooks.$r" ||
				fail "rank $r: libc's $fn does not jump into $lib: $(cat "$TMPD/hooks.$r")"
		done
	done
	log "rank 0's hooked libc calls: $(tr '\n' ' ' <"$TMPD/hooks.0")"
}

# expect_mapped LIB...: every rank maps each LIB (the transport is in use).
expect_mapped() {
	local r lib
	for r in "${!RANK_PID[@]}"; do
		for lib in "$@"; do
			grep -q "/$lib" "/proc/${RANK_PID[$r]}/maps" ||
				fail "rank $r does not map $lib ($(tail -5 "$JOB_OUT"))"
		done
	done
}

truth_launched() {
	local np=$1 prefix=$2 tol=$3
	shift 3
	fresh_logs launched
	expand_args "$@"
	local out=$TMPD/out.launched extra
	TOOL_ERR_NAME=tool.err.launched launch_under_tool "$out" "$np" \
		${TOOL_ARGS[@]+"${TOOL_ARGS[@]}"} -- "${EXPANDED[@]}"
	wait_ranks "$np" 30
	wait_events "$prefix" ready "$np" 30
	start_sampler "$TMPD/sampler.csv"
	go
	wait_tool_ok 90 "the launched job ended"
	stop_sampler
	check_no_bpf_leftovers
	extra=$(cd "$out" && ls pid-*.csv 2>/dev/null || true)
	[ -z "$extra" ] || fail "processes that are not ranks were accounted: $extra"
	truth_check "$np" "$prefix" "$tol" "$out"
}
