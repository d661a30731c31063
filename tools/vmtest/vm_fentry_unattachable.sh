#!/bin/bash
# Inside a VM of the kernel matrix (whose kernels allow fentry): the
# fentry/fexit programs load, but the kernel refuses one of their links.
# MEMATTR_TEST_FENTRY_UNATTACHABLE makes it so: before its own links, the
# tool fills the last memory call's trampoline (__x64_sys_shmdt) with empty
# programs of its own until the kernel takes no more (E2BIG), as other
# tools' programs could; the calls before it have attached by then. The
# memory calls must then go through the syscall tracepoints, said once,
# with no fentry link left behind:
#  1. the per-job tool, which attaches at its start: it traces the command
#     it launches and sees its memory requests; run_info.csv says
#     memory_calls,tracepoints.
#  2. the node service, which attaches when a job appears (--detach-after
#     3): the job is traced on the 22 syscall tracepoints and no fentry
#     link; after the detach a second job brings the tracepoints straight
#     away (no second message); the metrics say hooks="tracepoints".
# Seen failing with the fallback removed (attach_syscalls returning the
# fentry links' error): the tool exits "cannot attach fentry to
# __x64_sys_shmdt: Argument list too long".
source "$(dirname "$0")/../../tests/integration/lib.sh"
source "$(dirname "$0")/daemon_hooks.sh"

it_setup
export MEMATTR_TEST_FENTRY_UNATTACHABLE=1
FALLBACK='^memattr-bpf: cannot attach fentry to __x64_sys_shmdt: .*: memory calls through the syscall tracepoints from now on$'

# 1. The per-job tool.
OUT=$TMPD/tool-out
mkdir -p "$OUT"
ERR=$TMPD/tool.err
"$MEMATTR_BIN" --verbose --output "$OUT" -- /bin/sh -c 'sleep 1; ls / >/dev/null' >"$TMPD/tool.out" 2>"$ERR" &
TOOL_PID=$!
track_pid "$TOOL_PID"
wait_exit "$TOOL_PID" 300 || fail "the tool still runs after 300 s"
[ "$WAIT_RC" -eq 0 ] || fail "the tool exited with status $WAIT_RC: $(grep -v '^libbpf' "$ERR" | tail -5)"
grep -q 'MEMATTR_TEST_FENTRY_UNATTACHABLE: [1-9][0-9]* links of its own on __x64_sys_shmdt' "$ERR" ||
	fail "the test's links were not made: $(grep MEMATTR_TEST "$ERR")"
n=$(grep -cE "$FALLBACK" "$ERR" || true)
[ "$n" = 1 ] || fail "the fallback said $n times, not once: $(grep -E 'fentry|tracepoints' "$ERR")"
log "tool: $(grep -E "$FALLBACK" "$ERR")"
grep -qx 'memory_calls,tracepoints' "$OUT/run_info.csv" ||
	fail "run_info.csv does not say memory_calls,tracepoints: $(grep memory_calls "$OUT/run_info.csv")"
req=$(awk -F, '$1 == "memory_requests" { print $2 }' "$OUT/run_info.csv")
[ "${req:-0}" -gt 0 ] || fail "no memory request seen through the tracepoints (memory_requests ${req:-none})"
log "tool: run_info memory_calls,tracepoints, memory_requests $req"
check_no_bpf_leftovers

# 2. The node service.
ERR=$TMPD/daemon.err
PROM=$TMPD/prom
mkdir -p "$PROM"
"$MEMATTR_BIN" daemon --spool "$TMPD/spool" --listen none --socket none --textfile "$PROM" \
	--detach-after 3 2>"$ERR" &
DAEMON_PID=$!
track_pid "$DAEMON_PID"
until_line '^memattr-bpf: daemon: watching' 300
line=$(grep '^memattr-bpf: daemon: watching' "$ERR")
[[ $line == *"memory calls through fentry/fexit on __x64_sys_*"* ]] ||
	fail "the fentry programs did not load on this kernel: $line"
for round in 1 2; do
	sleep_job 12
	n=$(daemon_hooks)
	[ "$n" = "22 0" ] || fail "job $JOB (round $round) traced with $n syscall tracepoints and fentry links, not 22 and 0"
	log "round $round: job $JOB traced: $n syscall tracepoints and fentry links"
	wait "$J" || true
	until_line "job $JOB.*ended" 120
	until_detached 60
	ri=$(find "$TMPD/spool" -path "*$JOB*" -name run_info.csv | head -1)
	[ -n "$ri" ] && grep -qx 'memory_calls,tracepoints' "$ri" ||
		fail "job $JOB's run_info.csv (${ri:-none in the spool}) does not say memory_calls,tracepoints"
done
n=$(grep -cE "$FALLBACK" "$ERR" || true)
[ "$n" = 1 ] || fail "the daemon said the fallback $n times, not once: $(grep -E 'fentry|tracepoints' "$ERR")"
log "daemon: $(grep -E "$FALLBACK" "$ERR")"
t0=$EPOCHREALTIME
until grep -q '^memattr_memory_calls_info{hooks="tracepoints"} 1$' "$PROM/memattr.prom" 2>/dev/null; do
	elapsed_since "$t0" 30 && fail "the metrics do not say hooks=tracepoints: $(grep memory_calls "$PROM/memattr.prom")"
	sleep 0.5
done
log "daemon: metrics $(grep '^memattr_memory_calls_info' "$PROM/memattr.prom")"
kill -TERM "$DAEMON_PID"
wait_exit "$DAEMON_PID" 120 || fail "the daemon did not stop"
[ "$WAIT_RC" -eq 0 ] || fail "the daemon exited with status $WAIT_RC: $(tail -3 "$ERR")"
check_no_bpf_leftovers
pass
