#!/bin/bash
# Attribution against ground truth under Open MPI with UCX's memory hooks
# active: test_truth_attribution's 4-rank mpi_truth job over pml ucx on this
# node without InfiniBand. Debian's Open MPI 4.1.4 has pml ucx but selects
# it only for mlx* devices and the rc/ud/dc verbs transports;
# pml_ucx_tls/pml_ucx_devices "any" let it run over UCX's shared-memory
# transports. With Open MPI's own memory patcher left out (memory ^patcher),
# UCX installs its hooks: libucm rewrites libc's mmap, munmap, mremap,
# madvise, brk and sbrk to jump into ucm_override_*, as in every MPICH rank,
# so the application's requests reach the kernel through libucm frames.
# Attached by --job after the start; every component within 5% of its truth
# at every plateau (check_truth.py) -- which holds once libucm is a
# forwarder (uprobe_specs: forward library libucm.so). Open MPI's default
# with pml ucx, its patcher, is test_truth_ompi_patcher.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lang_truth.sh"

it_setup
TRUTH_MPIRUN_ARGS=(--mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any --mca memory ^patcher)
truth_start_job 4 truth "$TMPD/bin/mpi_truth$MPI_SUFFIX" --log-dir @LOGS@ --go-file @GO@ --unit-mib 1 --plateau-ms 700
# The point of the test: UCX really is the transport, and libc's memory
# calls really jump where this test says, in every rank.
expect_mapped mca_pml_ucx.so libucp.so libucm.so
expect_libc_hooks mmap=libucm.so munmap=libucm.so brk=libucm.so sbrk=libucm.so
truth_attach_check 4 truth 0.05
pass
