#!/bin/bash
# Inside a VM of the kernel matrix: on a kernel that lacks what a mode
# needs (--heap: uprobe_multi links, Linux 6.6), the tool says so in one
# line naming the feature and the kernel that has it, exits non-zero, and
# leaves no BPF program behind. On a kernel that has it, --heap must start.
source "$(dirname "$0")/../../tests/integration/lib.sh"

it_setup
IFS=. read -r major minor _ <<<"$(uname -r)"
rc=0
"$MEMATTR_BIN" --heap --output "$TMPD/out" -- /bin/true >"$TMPD/out.txt" 2>"$TMPD/err.txt" || rc=$?
if [ "$major" -lt 6 ] || { [ "$major" -eq 6 ] && [ "$minor" -lt 6 ]; }; then
	[ "$rc" -ne 0 ] || fail "--heap on $(uname -r) exited 0: $(cat "$TMPD/err.txt")"
	[ "$(wc -l <"$TMPD/err.txt")" -eq 1 ] || fail "not one line: $(cat "$TMPD/err.txt")"
	grep -q 'uprobe_multi.*Linux 6\.6' "$TMPD/err.txt" || fail "the line does not name the feature and its kernel: $(cat "$TMPD/err.txt")"
	log "refused as it must: $(cat "$TMPD/err.txt")"
else
	[ "$rc" -eq 0 ] || fail "--heap on $(uname -r) failed (exit $rc): $(cat "$TMPD/err.txt")"
	log "--heap runs on $(uname -r)"
fi
check_no_bpf_leftovers
pass
