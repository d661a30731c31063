#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Attach with --job <launcher pid> to a launcher that keeps forking (issue
# 31): every child must be traced, those forked while the tool attaches
# included. fork_pace (tests/workloads/) forks a child every 20 ms, as the
# test user, from before the tool starts until 1 s after its "tracing"
# line (however long the tool takes to get there: --max is only a guard);
# child k holds (2 + k % 4) MiB it touched itself and logs its pid,
# and every child lives until all have been sampled. Each child the log
# names must have its pid-<P>.csv, with a peak `total` of at least what it
# holds (and not far above: it is a small C program).
#
# Fails on the code before the fix because the tool read the launcher's
# descendants from /proc before loading its BPF programs and only then put
# the launcher in the kernel's traced set: the children forked in between
# (the whole BPF load: many, at this pace) were in neither, and had no file.
# Mutation checked: removing the call to tracker_adopt_descendants() in
# cmd/trace.c (the re-scan once the tracer is live) makes it fail the same
# way.
source "$(dirname "$0")/lib.sh"

EVERY_MS=20
MAX_CHILDREN=3000
CHILD_MIB=2

it_setup
[ -x "$WORKLOAD_SRC_BIN/fork_pace" ] || make -s -C "$REPO/tests/workloads" >/dev/null
cp "$WORKLOAD_SRC_BIN/fork_pace" "$TMPD/bin/" && chmod 755 "$TMPD/bin/fork_pace"
CHILDREN=$LOGS/children.csv

log "launching as $TEST_USER: fork_pace --every-ms $EVERY_MS --child-mib $CHILD_MIB"
as_user "$TMPD/bin/fork_pace" --log "$CHILDREN" --stop-file "$STOP_FILE" \
	--exit-file "$GO_FILE" --every-ms "$EVERY_MS" --child-mib "$CHILD_MIB" --max "$MAX_CHILDREN" \
	>"$JOB_OUT" 2>&1 &
JOB_PID=$!
track_pid "$JOB_PID"
LAUNCHER=$(find_descendant "$JOB_PID" fork_pace 10) || fail "fork_pace did not start: $(cat "$JOB_OUT")"
track_pid "$LAUNCHER"
# A few children before the tool: those the first scan finds.
until [ "$(wc -l <"$CHILDREN" 2>/dev/null || echo 0)" -ge 3 ]; do
	pid_running "$LAUNCHER" || fail "fork_pace ended early: $(cat "$JOB_OUT")"
	sleep 0.01
done

OUT=$TMPD/out
start_tool --job "$LAUNCHER" --output "$OUT"
wait_tool_ready 30
# Forks after the attach too (the kernel's fork events), then no more.
sleep 1
touch "$STOP_FILE"
N=$(wc -l <"$CHILDREN")
log "stopped forking: $N children"
[ "$N" -lt "$MAX_CHILDREN" ] || fail "fork_pace stopped at --max $MAX_CHILDREN before the tool attached: no fork fell in the window"

# Every child sampled: a launcher's child that does not exec is named after
# 0.5 s (sample.c), then a few 100 ms samples.
sleep 1.5
go

wait_job_ok 60
wait_tool_ok 15 "the job ended"
check_no_bpf_leftovers
log "checking: check_forked.py"
"$PY" "$IT_DIR/check_forked.py" "$OUT" "$CHILDREN" --launcher "$LAUNCHER" ||
	fail "children missing or wrong (above); tool said: $(grep '^memattr-bpf: tracing' "$TOOL_ERR")"
pass
