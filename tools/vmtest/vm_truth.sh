#!/bin/bash
# Inside a VM of the kernel matrix: the C ground-truth job (mpi_truth: the
# program's mallocs of every kind, libtruth.so's own, mmap, a SysV segment,
# a thread's arena, MPI_Alloc_mem) on 2 ranks of Open MPI, run by the
# unprivileged test user, attached by --job as root: every component must
# match what the workload says it holds, plateau by plateau, within 5%.
# The host's test_truth_attribution.sh with 2 ranks and without its check
# that the faults' frame was found (the VM's kernel may lay it out
# otherwise: then ma_fault_user gives the addresses), and with the memory
# calls' programs on fentry/fexit where the host has tracepoints (checked
# to fail on 6.12 with MEMATTR_SYSCALL_HOOKS=tracepoints alone: the tool
# held 22 syscall tracepoints and no fentry link).
source "$(dirname "$0")/../../tests/integration/lib.sh"
source "$IT_DIR/lang_truth.sh"

# Under emulation the tool's start takes 10-40 s (the verifier, the
# tracepoints' attach) and Python's a few: the sampler runs before the
# tool starts, so that it covers the tool's whole timeline (the checks line
# the two up), and the timeline's origin is looked for around the start the
# tool recorded (run_info.csv), not around its ready line. Ranks idle in MPI yield their CPU, and
# every wait of lib.sh gets VM_SLOW times as long.
TRUTH_MPIRUN_ARGS=(--mca mpi_yield_when_idle 1)
VM_SLOW=${VM_SLOW:-5}
slow() {	# function, index of its timeout argument
	eval "lib_$(declare -f "$1")"
	eval "$1() { local a=(\"\$@\"); a[$2]=\$((a[$2] * VM_SLOW)); lib_$1 \"\${a[@]}\"; }"
}
slow wait_ranks 1
slow wait_events 3
slow wait_tool_ready 0
slow wait_job_ok 0
slow wait_tool_ok 0

# The sampler has opened its output once its loop runs (it writes buffered).
wait_sampler() {
	local i
	for i in $(seq 600); do
		ls -l "/proc/$SAMPLER_PID/fd" 2>/dev/null | grep -q "$SAMPLER_OUT" && return 0
		sleep 0.1
	done
	fail "the sampler did not start"
}

it_setup
out=$TMPD/out.attached
truth_start_job 2 truth "$TMPD/bin/mpi_truth" --log-dir @LOGS@ --go-file @GO@ --unit-mib 1 \
	--plateau-ms 1500 --go-timeout-s 600
start_sampler "$TMPD/sampler.csv"
wait_sampler
start_tool --job "$TRUTH_JOB" --output "$out"
wait_tool_ready 30
# The matrix's kernels allow fentry: the memory calls' requests the truth is
# checked on came through the fentry/fexit programs, no syscall tracepoint
# (VM_SYSCALL_HOOKS=tracepoints: the other way round).
n="$(syscall_tps "$TOOL_PID") $(fentry_links "$TOOL_PID")"
case ${VM_SYSCALL_HOOKS:-fentry} in
fentry) [ "$n" = "0 22" ] || fail "the tool holds $n syscall tracepoints and fentry links, not 0 and 22" ;;
*) [ "$n" = "22 0" ] || fail "the tool holds $n syscall tracepoints and fentry links, not 22 and 0" ;;
esac
log "the tool's syscall tracepoints and fentry/fexit links: $n"
go
wait_job_ok 120
wait_tool_ok 15 "the job ended"
stop_sampler
check_no_bpf_leftovers
extra=$(cd "$out" && ls pid-*.csv 2>/dev/null || true)
[ -z "$extra" ] || fail "processes that are not ranks were accounted: $extra"
# The checks look for the origin from 10 s before T_LINE to 2 s after.
T_LINE=$("$PY" -c 'import sys, time
start = [l.split(",")[1] for l in open(sys.argv[1]) if l.startswith("start_time_unix_s,")][0]
print(f"{float(start) - (time.time() - time.monotonic()) + 1:.6f}")' "$out/run_info.csv") ||
	fail "no start_time_unix_s in run_info.csv"
truth_check 2 truth 0.05 "$out"
pass
