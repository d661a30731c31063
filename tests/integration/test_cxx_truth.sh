#!/bin/bash
# Ground truth in C++ (issue 10): a 2-rank mpi_cxx job whose program fills
# std::vectors and calls new/aligned new in functions of its own (with
# MPI_Allreduce between, leaving other libraries' frames deeper on the
# stack), and whose own C++ library allocates with new and a std::vector.
# operator new only forwards (uprobe_specs/libstdcxx.spec): app,
# lib:libcxxtruth.so, mpi and lib:libstdc++.so must each be within 2% of
# truth at every plateau, attached late (--job) and launched under the tool.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lang_truth.sh"

NP=2
it_setup
truth_attached "$NP" cxx 0.02 "$TMPD/bin/mpi_cxx" --log-dir @LOGS@ --go-file @GO@ \
	--unit-mib 8 --plateau-ms 600
truth_launched "$NP" cxx 0.02 "$TMPD/bin/mpi_cxx" --log-dir @LOGS@ --go-file @GO@ \
	--unit-mib 8 --plateau-ms 600
pass
