#!/bin/bash
# OOM post-mortem (issue 36): a rank in a memory-limited cgroup grows past
# its limit and the OOM killer ends it. The dataset must name the rank, the
# pid, the time, the limit in bytes and that it was the cgroup's, the split
# at the last sample (app and the library in the ratio they grew by
# construction) and the growth before it; summary.csv must mark the
# victim's rows, the report must say it first, and the launched command's
# files must all be whole although the OOM killer ended it.
#
# The workload (oom_grow: 2 MiB from the program and 1 MiB from
# liboomgrow.so every 150 ms, run by the test user with the rank in its
# environment) is put in a cgroup this test makes and removes: the v1
# memory controller's (memory.limit_in_bytes, memsw too: no swap to hide
# in) on hybrid machines as these, v2's (memory.max, memory.swap.max)
# elsewhere. The tool launches it as root; runuser drops to the user.
source "$(dirname "$0")/lib.sh"

LIMIT=$((64 * 1024 * 1024))
RANK=3
CG_NAME=memattr-it-oom.$$
CG=""

cg_remove() {
	[ -n "$CG" ] && [ -d "$CG" ] || return 0
	local t
	# The killed process's pages leave its cgroup as its exit completes.
	for t in $(seq 50); do rmdir "$CG" 2>/dev/null && return 0; sleep 0.1; done
	echo "[$TEST_NAME] could not remove $CG: $(cat "$CG/cgroup.procs" 2>/dev/null | tr '\n' ' ')"
}

cg_make() {
	if [ -f /sys/fs/cgroup/memory/memory.limit_in_bytes ]; then
		CG=/sys/fs/cgroup/memory/$CG_NAME
		mkdir "$CG" || fail "cannot make the cgroup $CG"
		echo "$LIMIT" >"$CG/memory.limit_in_bytes" || fail "cannot set $CG/memory.limit_in_bytes"
		[ -f "$CG/memory.memsw.limit_in_bytes" ] && echo "$LIMIT" >"$CG/memory.memsw.limit_in_bytes"
		echo 0 >"$CG/memory.swappiness" 2>/dev/null || true
		CG_KIND=v1
	elif grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
		grep -qw memory /sys/fs/cgroup/cgroup.subtree_control ||
			echo +memory >/sys/fs/cgroup/cgroup.subtree_control || fail "cannot enable the memory controller"
		CG=/sys/fs/cgroup/$CG_NAME
		mkdir "$CG" || fail "cannot make the cgroup $CG"
		echo "$LIMIT" >"$CG/memory.max" || fail "cannot set $CG/memory.max"
		[ -f "$CG/memory.swap.max" ] && echo 0 >"$CG/memory.swap.max"
		CG_KIND=v2
	else
		fail "no memory cgroup controller (v1 or v2) on this machine"
	fi
	log "cgroup $CG ($CG_KIND), limit $LIMIT bytes"
}

it_setup
trap 'rc=$?; cg_remove; (exit $rc); it_cleanup' EXIT
[ -x "$WORKLOAD_SRC_BIN/oom_grow" ] || make -s -C "$REPO/tests/workloads" >/dev/null
[ -x "$WORKLOAD_SRC_BIN/oom_grow" ] || fail "no workload bin/oom_grow"
cp "$WORKLOAD_SRC_BIN/oom_grow" "$WORKLOAD_SRC_BIN/liboomgrow.so" "$TMPD/bin/"
chmod 755 "$TMPD/bin/oom_grow" "$TMPD/bin/liboomgrow.so"
cg_make

OUT=$TMPD/out
# The shell joins the cgroup (everything below is limited) and starts the
# rank as mpirun would: a child that has its rank variable from its first
# exec (setpriv, which execs the workload as the test user in place). A
# chain that sets it only at a later exec (runuser, then env -i) leaves a
# process named by its pid if a sample comes between the two.
start_tool --output "$OUT" -- sh -c 'echo $$ >"$1/cgroup.procs" &&
	(OMPI_COMM_WORLD_RANK="$3" exec setpriv --reuid="$2" --regid="$2" --clear-groups -- \
		"$4" --app-mib 2 --lib-mib 1 --step-ms 150); exit $?' \
	oom "$CG" "$TEST_USER" "$RANK" "$TMPD/bin/oom_grow"
wait_exit "$TOOL_PID" 120 || fail "the tool still runs 120 s on: the workload was not killed?"
log "tool exited with status $WAIT_RC; stdout:"
sed 's/^/    /' "$TMPD/tool.out"
grep -q '^OOM kill: rank '"$RANK"' ' "$TMPD/tool.out" || fail "the terminal summary names no OOM kill of rank $RANK"
[ -f "$OUT/run_info.csv" ] || fail "no run_info.csv: $(cat "$TOOL_ERR")"
grep -q '^finished,1$' "$OUT/run_info.csv" || fail "run_info.csv does not say the run finished"

"$PY" "$IT_DIR/check_oom.py" "$OUT" --rank "$RANK" --limit "$LIMIT" --cgroup "/$CG_NAME" \
	--lib lib:liboomgrow.so --app-per-step 2 --lib-per-step 1 || fail "the post-mortem (above)"

"$MEMATTR_BIN" report "$OUT" >"$TMPD/report.out" 2>&1 || fail "report failed: $(cat "$TMPD/report.out")"
html=$(ls "$OUT"/*.html | head -1)
grep -q 'killed by the OOM killer' "$html" || fail "the report does not say a process was killed"
grep -q "Rank $RANK (pid" "$html" || fail "the report does not name rank $RANK"
check_no_bpf_leftovers
pass
