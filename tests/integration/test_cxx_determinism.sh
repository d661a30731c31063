#!/bin/bash
# Determinism (issue 10): the same 2-rank C++ job (mpi_cxx: std::vectors,
# new, aligned new, its own C++ library) run 10 times, the tool attached by
# --job after MPI_Init each time. At the peak (the plateau where everything
# is held, 1 s) every rank's app, lib:libcxxtruth.so, lib:libstdc++.so,
# libc, stack and unattributed must be within 1% of the median of the ten
# runs, +128 KiB (32 pages: what a page count read while a rank is still
# faulting in can differ by, on components of a few MiB such as the
# pre-attach `unattributed`); mpi within 1% + 256 KiB: the
# MPI library's own memory differs by up to ~0.2 MiB between runs (the
# rank's total does too), whoever counts it. The word scan this replaces
# put the same vectors in mpi or lib:libstdc++.so from run to run.
source "$(dirname "$0")/lib.sh"

NP=2
RUNS=${DETERMINISM_RUNS:-10}
it_setup
outs=()
for i in $(seq 1 "$RUNS"); do
	LOGS=$TMPD/logs.$i
	install -d -o "$TEST_USER" -g "$(id -g "$TEST_USER")" "$LOGS"
	GO_FILE=$LOGS/go
	JOB_OUT=$TMPD/job.out.$i
	job=$((500000 + RANDOM * 32 + RANDOM % 32))
	t0=$EPOCHREALTIME
	start_job "$NP" -x "SLURM_JOB_ID=$job" -- "$TMPD/bin/mpi_cxx" --log-dir "$LOGS" \
		--go-file "$GO_FILE" --unit-mib 8 --plateau-ms 200 --peak-ms 1000 >/dev/null
	wait_ranks "$NP" 30 >/dev/null
	wait_events cxx ready "$NP" 30 >/dev/null
	out=$TMPD/out.$i
	start_tool --job "$job" --output "$out" >/dev/null
	wait_tool_ready 30 >/dev/null
	go >/dev/null
	wait_job_ok 60 >/dev/null
	wait_tool_ok 15 "the job ended" >/dev/null
	log "run $i: $(seconds_since "$t0")s, $(grep -E '^unwind_fallbacks,' "$out/run_info.csv")"
	outs+=("$out")
done
check_no_bpf_leftovers
"$PY" "$IT_DIR/check_determinism.py" "${outs[@]}" --tol 0.01 --floor-kib 128 \
	--components total,app,libc,stack,unattributed ||
	fail "the same job gave different figures (above)"
"$PY" "$IT_DIR/check_determinism.py" "${outs[@]}" --tol 0.01 --floor-kib 256 \
	--components mpi --no-libs || fail "the same job gave different mpi figures (above)"
pass
