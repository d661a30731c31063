#!/bin/bash
# Memory a forked child asks for at once: as test_exited_child, but each
# rank's child mallocs its (R+1)*N MiB block immediately after the fork,
# before the tool's first look at the new process. The tool saw the fork
# (it follows the ranks' children), and the block was asked for by the
# program's own code after attach, so it is `app` (docs/attribution.md: unattributed is
# pre-attach memory, [vdso], and requests whose caller was not found).
CHILD_DELAY_MS=0
source "$(dirname "$0")/test_exited_child.sh"
