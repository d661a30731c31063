#!/bin/bash
# Launch mode, as a user runs it under sudo: `memattr-bpf -- mpirun ...` with
# SUDO_UID/SUDO_GID set must run the command as that user, not as root (the
# ranks' log files must be owned by the user; Open MPI also refuses to run as
# root), trace it from the start, and exit with its status when it ends.
# The CSVs get the same contract and ground-truth checks as an attach.
source "$(dirname "$0")/lib.sh"

NP=2
MALLOC_MIB=16
MMAP_MIB=8
ALLOC_MEM_MIB=4		# MPI_Alloc_mem: the MPI library's memory

it_setup
uid=$(id -u "$TEST_USER")
OUT=$TMPD/out
set_sudo_env
TOOL_ERR=$TMPD/tool.err
log "starting: ${SUDO_ENV[*]} memattr-bpf --output $OUT -- mpirun ..."
TOOL_START=$EPOCHREALTIME
no_sigpipe "${SUDO_ENV[@]}" "$MEMATTR_BIN" --output "$OUT" -- mpirun --oversubscribe -np "$NP" \
	"$TMPD/bin/mpi_phases" --log-dir "$LOGS" --go-file "$GO_FILE" \
	--malloc-mib "$MALLOC_MIB" --mmap-mib "$MMAP_MIB" --alloc-mem-mib "$ALLOC_MEM_MIB" --plateau-ms 800 \
	>"$TMPD/tool.out" 2>"$TOOL_ERR" &
TOOL_PID=$!
track_pid "$TOOL_PID"
JOB_OUT=$TMPD/tool.out	# the launched job writes through the tool
wait_tool_ready 30
MPIRUN_PID=$(find_descendant "$TOOL_PID" mpirun 15) ||
	fail "no mpirun below the tool; tool stderr: $(cat "$TOOL_ERR"); stdout: $(cat "$TMPD/tool.out")"
track_pid "$MPIRUN_PID"
mpirun_uid=$(awk '/^Uid:/ { print $2 }' "/proc/$MPIRUN_PID/status")
[ "$mpirun_uid" = "$uid" ] || fail "mpirun runs as uid $mpirun_uid, expected SUDO_UID $uid"
wait_ranks "$NP" 30
wait_events phases ready "$NP" 30
for r in $(seq 0 $((NP - 1))); do
	owner=$(stat -c %u "$LOGS/phases-rank-$r.csv")
	[ "$owner" = "$uid" ] || fail "rank $r wrote its log as uid $owner, expected $uid (SUDO_UID)"
done
start_sampler "$TMPD/sampler.csv"
go

wait_tool_ok 90 "the launched job ended"
stop_sampler
for r in $(seq 0 $((NP - 1))); do
	grep -q '^end,' "$LOGS/phases-rank-$r.csv" || fail "rank $r never reached its end (job output: $(tail -5 "$TMPD/tool.out"))"
done
check_no_bpf_leftovers
run_checker "$OUT" --ranks "$NP" --sampler "$TMPD/sampler.csv" --phase-dir "$LOGS" \
	--malloc-mib "$MALLOC_MIB" --mmap-mib "$MMAP_MIB" --alloc-mem-mib "$ALLOC_MEM_MIB" \
	--t-line "$T_LINE"

# The command's end ends the run at once, not at the next sample: with a
# 10 s interval, a command of 0.3 s must not keep the tool for 10 s.
log "launch with --interval 10000: the tool ends with its command"
t0=$EPOCHREALTIME
"${SUDO_ENV[@]}" timeout 60 "$MEMATTR_BIN" --interval 10000 --output "$TMPD/out-short" -- sleep 0.3 \
	>"$TMPD/short.out" 2>"$TMPD/short.err" || fail "short launch failed: $(cat "$TMPD/short.err")"
took=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
awk -v t="$took" 'BEGIN { exit !(t < 5) }' ||
	fail "the tool ended ${took} s after it started a 0.3 s command: it waited for its next sample (--interval 10000)"
grep -qx 'finished,1' "$TMPD/out-short/run_info.csv" ||
	fail "the short run's run_info.csv does not say finished,1: $(cat "$TMPD/out-short/run_info.csv")"
check_no_bpf_leftovers

# The command runs with the signal dispositions and mask its caller gave
# the tool, not the tool's own: the tool ignores SIGPIPE, and an ignored
# signal stays ignored across exec, so `memattr-bpf -- prog | head` would
# have left prog writing on after head ended. Both ways round.
show_signals='grep -E "^Sig(Ign|Blk):" /proc/self/status'
for pipe in default ignore; do
	want=$("${SUDO_ENV[@]}" --$pipe-signal=PIPE sh -c "$show_signals")
	got=$("${SUDO_ENV[@]}" --$pipe-signal=PIPE "$MEMATTR_BIN" --quiet --output "$TMPD/out-sig-$pipe" -- \
		sh -c "$show_signals" 2>"$TMPD/sig-$pipe.err") || fail "launch of sh failed: $(cat "$TMPD/sig-$pipe.err")"
	[ "$got" = "$want" ] ||
		fail "SIGPIPE $pipe for the tool: its command has $(echo $got), run without the tool $(echo $want)"
done
log "a launched command keeps its caller's signal dispositions and mask (SIGPIPE default and ignored)"
check_no_bpf_leftovers

# The tool's output going to a pipe (`... | tee log`, ssh) ends with the
# tool. The kernel goes on detaching the programs for about a second after
# the tool's exit, in a child that holds the BPF descriptors; holding the
# tool's stdout and stderr as well, it kept a reader of the pipe waiting.
log "launch with its output to a pipe: the detaching child does not hold it"
"$PY" "$IT_DIR/detacher_output.py" "$TMPD/pipe.err" "${SUDO_ENV[@]}" "$MEMATTR_BIN" \
	--output "$TMPD/out-pipe" -- true >"$TMPD/pipe.check" 2>&1 ||
	fail "$(cat "$TMPD/pipe.check"); tool stderr: $(cat "$TMPD/pipe.err")"
log "$(cat "$TMPD/pipe.check")"
check_no_bpf_leftovers

# A batch script sees its job fail through the tool: the tool exits with
# the command's status (128 + N for signal N), once every file is written.
for want in 3 137; do
	case $want in
	3) cmd='exit 3' ;;
	137) cmd='kill -KILL $$' ;;
	esac
	rc=0
	"${SUDO_ENV[@]}" timeout 60 "$MEMATTR_BIN" --output "$TMPD/out-rc$want" -- sh -c "$cmd" \
		>"$TMPD/rc$want.out" 2>"$TMPD/rc$want.err" || rc=$?
	[ "$rc" = "$want" ] ||
		fail "a command ending with status $want ('$cmd'): the tool exited $rc: $(cat "$TMPD/rc$want.err")"
	grep -qx 'finished,1' "$TMPD/out-rc$want/run_info.csv" ||
		fail "after a command ending with status $want, run_info.csv does not say finished,1"
done

# Ctrl-C reaches the tool and its command alike: the tool still flushes and
# exits 0 (the SIGINT contract), not 130 from the command's death by SIGINT.
TOOL_ERR=$TMPD/int.err
TOOL_START=$EPOCHREALTIME
"${SUDO_ENV[@]}" "$MEMATTR_BIN" --output "$TMPD/out-int" -- sleep 30 >"$TMPD/int.out" 2>"$TOOL_ERR" &
TOOL_PID=$!
track_pid "$TOOL_PID"
wait_tool_ready 30
int_cmd=$(find_descendant "$TOOL_PID" sleep 5) || fail "no sleep below the tool: $(cat "$TOOL_ERR")"
kill -INT "$int_cmd" "$TOOL_PID"
rc=0
wait "$TOOL_PID" || rc=$?
[ "$rc" = 0 ] || fail "SIGINT to the tool and its command: the tool exited $rc, want 0: $(cat "$TOOL_ERR")"
check_no_bpf_leftovers
pass
