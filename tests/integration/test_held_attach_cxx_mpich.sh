#!/bin/bash
# test_held_attach_cxx under MPICH (hydra): a 2-rank
# mpi_held_cxx job fills a global std::vector, a vector of small vectors
# (1 KiB heap chunks reached through the outer vector's array), a new[]
# block held by a global pointer and a std::vector local to main, and its
# own C++ library (libcxxtruth.so) holds a new[] block and a std::vector in
# its statics -- all before the tool attaches by --job. app and
# lib:libcxxtruth.so within 5% of their whole size (check_truth.py
# --absolute), held and after the release of the large blocks (exact,
# traced frees).
IT_MPI=mpich
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lang_truth.sh"

it_setup
TRUTH_CHECK_ARGS=(--absolute)
truth_start_job 2 heldcxx "$TMPD/bin/mpi_held_cxx$MPI_SUFFIX" --log-dir @LOGS@ --go-file @GO@ --unit-mib 4 --plateau-ms 1500
truth_attach_check 2 heldcxx 0.05
log "inferred: $(grep -E '^(infer|inferred)' "$TMPD/out.attached/run_info.csv" | tr '\n' ' ')"
pass
