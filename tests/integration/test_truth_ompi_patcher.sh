#!/bin/bash
# Attribution against ground truth under Open MPI with pml ucx as Open MPI
# sets it up by default (what a user on an InfiniBand cluster gets): the
# same job as test_truth_ompi_ucx, but Open MPI's memory patcher (built
# into libopen-pal) is active and rewrites libc's mmap, munmap, mremap,
# madvise and brk to jump into its own _intercept_* functions, while UCX's
# libucm takes sbrk. Every component within 5% of its truth at every
# plateau (check_truth.py) -- which holds only once the patcher's
# intercepts are forwarders. No spec line can name them on Debian: they
# are static functions of libopen-pal, which also allocates for itself (so
# the library as a whole is an owner, not a forwarder), and Debian strips
# libopen-pal's .symtab (libc_hooks.py shows where libc's calls jump: to
# libopen-pal+0x81ac0 for mmap in 4.1.4-3+b1). The tool finds them at run
# time by decoding the jumps patched into libc (docs/attribution.md, "Hooks
# patched into libc"), and says how many in run_info.csv (interposer_hooks).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lang_truth.sh"

it_setup
TRUTH_MPIRUN_ARGS=(--mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any)
truth_start_job 4 truth "$TMPD/bin/mpi_truth$MPI_SUFFIX" --log-dir @LOGS@ --go-file @GO@ --unit-mib 1 --plateau-ms 700
expect_mapped mca_pml_ucx.so libucp.so libucm.so
expect_libc_hooks mmap=libopen-pal.so munmap=libopen-pal.so brk=libopen-pal.so sbrk=libucm.so
truth_attach_check 4 truth 0.05
# Each rank's patched calls were seen as hooks (mmap, munmap, brk and sbrk
# at least), not merely attributed right by chance.
hooks=$(sed -n 's/^interposer_hooks,//p' "$TMPD/out.attached/run_info.csv")
[ "${hooks:-0}" -ge 16 ] || fail "run_info.csv: interposer_hooks ${hooks:-missing}, expected at least 16"
log "interposer_hooks: $hooks"
pass
