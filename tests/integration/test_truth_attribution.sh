#!/bin/bash
# Attribution against ground truth: a 4-rank mpi_truth job (the program's
# mallocs of every kind, a library's own mallocs, mmap and SysV segment, a
# thread's arena, strdup, MPI_Alloc_mem), attached by --job after it started. Every
# component (app, lib:libtruth.so, mpi) must match what the workload says it
# holds, plateau by plateau, within 5%. User page faults' addresses come
# from their own frames (no ma_fault_user attached).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lang_truth.sh"

it_setup
# The faults' addresses come from their frames here (test_fault_entry_program: the fallback).
TRUTH_TOOL_CHECK=fault_entry_program_absent
truth_attached 4 truth 0.05 "$TMPD/bin/mpi_truth$MPI_SUFFIX" --log-dir @LOGS@ --go-file @GO@ --unit-mib 1 --plateau-ms 700
pass
