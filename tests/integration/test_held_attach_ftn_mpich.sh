#!/bin/bash
# test_held_attach_ftn under MPICH (hydra): a 2-rank
# mpi_held_ftn job ALLOCATEs two arrays in the main program and two in a
# subroutine (module arrays) before the tool attaches by --job; their
# descriptors are the program's statics. app within 5% of its whole size
# (check_truth.py --absolute), held and after two arrays are DEALLOCATEd
# (exact, traced frees).
IT_MPI=mpich
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lang_truth.sh"

it_setup
TRUTH_CHECK_ARGS=(--absolute)
truth_start_job 2 ftn "$TMPD/bin/mpi_held_ftn$MPI_SUFFIX" @LOGS@ @GO@ 8 1500
truth_attach_check 2 ftn 0.05
log "inferred: $(grep -E '^(infer|inferred)' "$TMPD/out.attached/run_info.csv" | tr '\n' ' ')"
pass
