#!/bin/bash
# test_fortran_truth under MPICH (issue 10: Fortran ground truth on both
# MPIs): the 2-rank mpi_ftn job built with mpif90.mpich and launched by
# hydra. Every ALLOCATEd array is `app` although libucm's hooks sit between
# gfortran's runtime and the kernel: app, mpi and lib:libgfortran.so within
# 2% of truth at every plateau, attached late and launched under the tool.
IT_MPI=mpich
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lang_truth.sh"

NP=2
it_setup
truth_attached "$NP" ftn 0.02 "$TMPD/bin/mpi_ftn$MPI_SUFFIX" @LOGS@ @GO@ 8 600
truth_launched "$NP" ftn 0.02 "$TMPD/bin/mpi_ftn$MPI_SUFFIX" @LOGS@ @GO@ 8 600
pass
