#!/bin/bash
# Ground truth in Fortran (issue 10): a 2-rank mpi_ftn job ALLOCATEs arrays
# in its main program and in a subroutine, with MPI_Allreduce and
# MPI_Barrier between. Every array is `app`: app, mpi and lib:libgfortran.so
# must each be within 2% of truth at every plateau, attached late (--job)
# and launched under the tool.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lang_truth.sh"

NP=2
it_setup
truth_attached "$NP" ftn 0.02 "$TMPD/bin/mpi_ftn" @LOGS@ @GO@ 8 600
truth_launched "$NP" ftn 0.02 "$TMPD/bin/mpi_ftn" @LOGS@ @GO@ 8 600
pass
