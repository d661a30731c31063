#!/bin/bash
# test_cxx_truth under MPICH (issue 10: C++ ground truth on both MPIs): the
# same 2-rank mpi_cxx job built with mpicxx.mpich and launched by hydra.
# UCX's libucm hooks mmap and brk in these ranks, so a vector's pages reach
# the kernel through libucm and libmpich code as well as operator new:
# app, lib:libcxxtruth.so, mpi and lib:libstdc++.so must each be within 2%
# of truth at every plateau, attached late (--job) and launched under the
# tool, and hydra's launcher and proxy are followed, not accounted.
IT_MPI=mpich
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lang_truth.sh"

NP=2
it_setup
truth_attached "$NP" cxx 0.02 "$TMPD/bin/mpi_cxx$MPI_SUFFIX" --log-dir @LOGS@ --go-file @GO@ \
	--unit-mib 8 --plateau-ms 600
truth_launched "$NP" cxx 0.02 "$TMPD/bin/mpi_cxx$MPI_SUFFIX" --log-dir @LOGS@ --go-file @GO@ \
	--unit-mib 8 --plateau-ms 600
pass
