#!/bin/bash
# --no-fault-frame: user page faults' addresses come from ma_fault_user, a
# program at every fault's entry, the path the tool takes on a kernel whose
# fault frames it does not find. Attribution must hold as well as with the
# frame: the mpi_truth job of test_truth_attribution, attached, every
# component within 5% of its truth. The tool must hold a link to
# ma_fault_user (test_truth_attribution checks that it holds none there).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lang_truth.sh"

it_setup
TOOL_ARGS=(--no-fault-frame)
TRUTH_TOOL_CHECK=fault_entry_program_attached
truth_attached 4 truth 0.05 "$TMPD/bin/mpi_truth$MPI_SUFFIX" --log-dir @LOGS@ --go-file @GO@ --unit-mib 1 --plateau-ms 700
pass
