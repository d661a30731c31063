#!/bin/bash
# Commands a rank runs that end within a sample interval get no file: as
# test_exited_child, but each rank first runs 200 short commands
# (system("/bin/true"), a shell and the command, a few ms each) at the
# default --interval of 100 ms, so about eight samples fall while they
# run, each with a command of every rank alive. Each must be
# gone unread (docs/attribution.md: a rank's command is first read once it has lived an
# interval); the long-lived child, read once it has, keeps its own file
# with its memory. Before that rule, each command alive at a sample got a
# pid-<P>.csv of its own.
CHILD_COMMANDS=200
EXTRA_CHECK=check_only_children_files

check_only_children_files() {
	local f pid children
	children=$(awk -F, '$1 == "child_hold" { print $4 }' "$LOGS"/child-rank-*.csv 2>/dev/null | sort -u)
	grep -q commands_done "$LOGS"/child-rank-0.csv || fail "rank 0 did not log commands_done"
	for f in "$OUT"/pid-*.csv; do
		[ -e "$f" ] || continue
		pid=${f##*/pid-}
		pid=${pid%.csv}
		grep -qx "$pid" <<<"$children" ||
			fail "$f: a file for pid $pid, not one of the ranks' long-lived children ($(echo $children)): a short command was read"
	done
	log "only the long-lived children have files ($(ls "$OUT" | tr '\n' ' '))"
}

source "$(dirname "$0")/test_exited_child.sh"
