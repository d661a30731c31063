#!/bin/bash
# A rank's command is quiet in the kernel until the tool first reads it
# (docs/attribution.md, "Commands a rank runs"): its RSS changes are followed only from
# that read on. Here each rank's child grows its block a tenth at a time
# over a second, long after that first read, and smaps is not read again
# (--pss-interval 60 s): the child's `app` can reach its block only if its
# faults are followed once it has been read. As test_exited_child, with
# check_exited.py judging the children's files.
CHILD_DELAY_MS=0
CHILD_STEPS=10
TOOL_ARGS=(--pss-interval 60000)
source "$(dirname "$0")/test_exited_child.sh"
