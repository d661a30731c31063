#!/bin/bash
# Inside a VM of the kernel matrix: the C ground-truth job (mpi_truth: the
# program's mallocs of every kind, libtruth.so's own, mmap, a SysV segment,
# a thread's arena, MPI_Alloc_mem) on 2 ranks of Open MPI, run by the
# unprivileged test user, attached by --job as root: every component must
# match what the workload says it holds, plateau by plateau, within 5%.
# The host's test_truth_attribution.sh with 2 ranks and without its check
# that the faults' frame was found (the VM's kernel may lay it out
# otherwise: then ma_fault_user gives the addresses).
source "$(dirname "$0")/../../tests/integration/lib.sh"
source "$IT_DIR/lang_truth.sh"

# Under emulation Python takes seconds to start: the job is released once
# the sampler runs (the checks line the tool's timeline up with its
# samples), and ranks idle in MPI yield their CPU.
go() {
	local i
	# It has opened its output when its loop begins (it writes buffered).
	for i in $(seq 600); do
		ls -l "/proc/$SAMPLER_PID/fd" 2>/dev/null | grep -q "$SAMPLER_OUT" && break
		sleep 0.1
	done
	sleep 0.5
	touch "$GO_FILE"
	log "go (the sampler started)"
}
TRUTH_MPIRUN_ARGS=(--mca mpi_yield_when_idle 1)

it_setup
truth_attached 2 truth 0.05 "$TMPD/bin/mpi_truth" --log-dir @LOGS@ --go-file @GO@ --unit-mib 1 --plateau-ms 700
pass
