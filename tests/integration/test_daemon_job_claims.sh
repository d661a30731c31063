#!/bin/bash
# A job ID in an environment is its writer's word: another user claiming
# the ID of a user's job gets a job of their own, never a share of it
# (issue 32, findings 1 and 2). Two users, O (the job's owner) and X:
#  1. X's process with PBS_JOBID=J1 runs before O's job J1 starts: O's
#     job is still O's (series labelled O, O's own socket request served,
#     with O's ranks only); X asking for J1 gets X's own process only.
#  2. While O's job J2 runs, X starts `env PBS_JOBID=J2
#     OMPI_COMM_WORLD_RANK=9` holding 64 MiB: no rank 9 in O's series or
#     files, O's memattr_job_resident_bytes not inflated by X's memory.
#  3. Root's `--job J2` (two users claim it, no batch system vouches):
#     refused with a message naming both; `--job-user O` traces O's ranks
#     only. Root asking the socket without naming a uid: "ambiguous".
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"

command -v curl >/dev/null || fail "curl not installed (tools/install-deps.sh)"
it_setup
ensure_second_user
O=$TEST_USER X=$TEST_USER2
SPOOL=$TMPD/spool
SOCKDIR=$TMPD/run
install -d -m 0755 "$SOCKDIR"
SOCK=$SOCKDIR/memattr.sock
PORT=$(free_port)
URL=http://127.0.0.1:$PORT/metrics
BASE=$((600000 + RANDOM * 32 + RANDOM % 32))
J1=$BASE J2=$((BASE + 1))
install -m 0755 "$MEMATTR_BIN" "$TMPD/bin/memattr-bpf"
UO=$TMPD/uo UX=$TMPD/ux
install -d -o "$O" -m 0700 "$UO"
install -d -o "$X" -m 0700 "$UX"
as_x() {
	runuser -u "$X" -- env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$UX" USER="$X" LOGNAME="$X" "$@"
}
# X's impostor: claims job $1 as rank 9, holds 64 MiB it has touched, for $2 s.
impostor() {
	as_x env PBS_JOBID="$1" OMPI_COMM_WORLD_RANK=9 "$PY" -c \
		'import sys, time; b = b"x" * (64 << 20); time.sleep(float(sys.argv[1]))' "$2" \
		>"$TMPD/impostor.$1.out" 2>&1 &
	IMP_PID=$!
	track_pid "$IMP_PID"
}
series() {	# FILE ID USER: the rank labels of ID's total series under USER
	grep -oE "^memattr_rank_resident_bytes\\{job=\"$2\",uid=\"$(id -u "$3")\",step=\"[^\"]*\",rank=\"[^\"]*\",component=\"total\"\\}" "$1" |
		sed -E 's/.*rank="([^"]*)".*/\1/' | sort | tr '\n' ' '
}

start_daemon --spool "$SPOOL" --listen "127.0.0.1:$PORT" --socket "$SOCK" --interval 200 --metrics-detail rank

# ---- 1. X claims J1 first, then O's job J1 starts.
impostor "$J1" 25; IMP1=$IMP_PID
wait_daemon_line "job $J1 of $X:" 15 || fail "daemon did not see X's claim of $J1: $(cat "$DAEMON_ERR")"
user_job "$O" 2 "$J1" 8 12 "$TMPD/jobJ1.out"; PJ1=$UJOB_PID
t0=$EPOCHREALTIME
while :; do
	curl -fsS "$URL" >"$TMPD/m1.txt"
	[ "$(series "$TMPD/m1.txt" "$J1" "$O")" = "0 1 " ] && break
	elapsed_since "$t0" 20 && fail "O's job $J1 not exposed as O's ranks 0 1 (got '$(series "$TMPD/m1.txt" "$J1" "$O")', X's: '$(series "$TMPD/m1.txt" "$J1" "$X")'): $(grep "job=\"$J1\"" "$TMPD/m1.txt" | grep total | head); daemon: $(cat "$DAEMON_ERR")"
	sleep 0.3
done
[ "$(series "$TMPD/m1.txt" "$J1" "$X")" = "9 " ] ||
	fail "X's claim of $J1: series '$(series "$TMPD/m1.txt" "$J1" "$X")', expected X's own rank 9 only"
# Their users' names on the info series only: one per (job, uid).
for u in "$O" "$X"; do
	grep -q "^memattr_job_info{job=\"$J1\",uid=\"$(id -u "$u")\",user=\"$u\"} 1$" "$TMPD/m1.txt" ||
		fail "no memattr_job_info of $u's job $J1: $(grep "job=\"$J1\"" "$TMPD/m1.txt" | grep info)"
done
log "job $J1: O's ranks 0 1 under O, X's claim a job of X's own (rank 9 under X), each with its memattr_job_info"

# O asks for their job: served, O's ranks only.
as_user "$TMPD/bin/memattr-bpf" --job "$J1" --output "$UO/J1" --socket "$SOCK" --duration 2 \
	>"$TMPD/o1.out" 2>"$TMPD/o1.err" || fail "O's request for $J1: exit $?: $(cat "$TMPD/o1.err")"
[ -e "$UO/J1/rank-0.csv" ] && [ -e "$UO/J1/rank-1.csv" ] || fail "O's copy of $J1 lacks O's ranks: $(ls "$UO/J1")"
[ ! -e "$UO/J1/rank-9.csv" ] || fail "O's copy of $J1 holds X's fake rank 9"
# X asks for J1: X's own process, never O's ranks.
as_x "$TMPD/bin/memattr-bpf" --job "$J1" --output "$UX/J1" --socket "$SOCK" --duration 2 \
	>"$TMPD/x1.out" 2>"$TMPD/x1.err" || fail "X's request for $J1: exit $?: $(cat "$TMPD/x1.err")"
[ ! -e "$UX/J1/rank-0.csv" ] && [ ! -e "$UX/J1/rank-1.csv" ] || fail "X got O's timelines of $J1: $(ls "$UX/J1")"
[ -e "$UX/J1/rank-9.csv" ] || fail "X's own claim of $J1 not served to X: $(ls "$UX/J1")"
log "socket: O gets O's $J1, X gets only X's own process"
wait_exit "$PJ1" 60 || fail "job $J1 did not end"
[ "$WAIT_RC" -eq 0 ] || fail "job $J1 exited $WAIT_RC: $(tail -5 "$TMPD/jobJ1.out")"
kill "$IMP1" 2>/dev/null || true
wait_exit "$IMP1" 10 || true

# ---- 2. O's job J2 runs; X injects a 64 MiB rank 9 into it.
user_job "$O" 2 "$J2" 8 20 "$TMPD/jobJ2.out"; PJ2=$UJOB_PID
wait_daemon_line "job $J2 of $O:" 15 || fail "daemon did not pick up job $J2: $(cat "$DAEMON_ERR")"
sleep 1
impostor "$J2" 14; IMP2=$IMP_PID
wait_daemon_line "job $J2 of $X:" 15 || fail "daemon did not see X's claim of $J2: $(cat "$DAEMON_ERR")"
sleep 2
curl -fsS "$URL" >"$TMPD/m2.txt"
[ "$(series "$TMPD/m2.txt" "$J2" "$O")" = "0 1 " ] ||
	fail "O's job $J2: ranks '$(series "$TMPD/m2.txt" "$J2" "$O")' under O, expected '0 1' (X's fake rank 9 joined?)"
tot=$(metric_value "$TMPD/m2.txt" "^memattr_job_resident_bytes\\{job=\"$J2\",uid=\"$(id -u "$O")\",component=\"total\"\\}")
[ -n "$tot" ] || fail "no memattr_job_resident_bytes for O's job $J2"
# Two ranks of 8 MiB plus Open MPI's ~11 MiB each: far below X's 64 MiB alone.
[ "$tot" -lt $((60 << 20)) ] || fail "O's job $J2 total $tot bytes: inflated by X's 64 MiB"
log "injection: O's job $J2 has ranks 0 1 only, total $((tot >> 20)) MiB (X's 64 MiB not in it)"

# ---- 3. Root: two users claim J2 by environment only.
rc=0
"$MEMATTR_BIN" --job "$J2" --duration 1 --quiet --output "$TMPD/rootJ2" >"$TMPD/root.out" 2>"$TMPD/root.err" || rc=$?
[ "$rc" -ne 0 ] || fail "root's --job $J2 with two users claiming it: exit 0"
grep -q "several users" "$TMPD/root.err" && grep -q "($(id -u "$O"))" "$TMPD/root.err" &&
	grep -q "($(id -u "$X"))" "$TMPD/root.err" || fail "root's refusal does not name both users: $(cat "$TMPD/root.err")"
[ "$(wc -l <"$TMPD/root.err")" -eq 1 ] || fail "root's refusal: more than one line: $(cat "$TMPD/root.err")"
"$MEMATTR_BIN" --job "$J2" --job-user "$O" --duration 2 --quiet --output "$TMPD/rootJ2" \
	>"$TMPD/root.out" 2>"$TMPD/root.err" || fail "root's --job $J2 --job-user $O: exit $?: $(cat "$TMPD/root.err")"
[ -e "$TMPD/rootJ2/rank-0.csv" ] && [ -e "$TMPD/rootJ2/rank-1.csv" ] || fail "root's trace of O's $J2 lacks ranks: $(ls "$TMPD/rootJ2")"
[ ! -e "$TMPD/rootJ2/rank-9.csv" ] || fail "root's trace of O's $J2 holds X's rank 9"
"$PY" - "$SOCK" "$J2" "$(id -u "$O")" >"$TMPD/rootsock.out" <<'EOF' || fail "root's socket requests: $(cat "$TMPD/rootsock.out")"
import socket, sys
path, job, uid = sys.argv[1:4]
def ask(line):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(10)
    s.connect(path)
    s.sendall(line.encode())
    first = s.makefile("rb").readline().decode()
    s.close()
    return first
a = ask(f"MEMATTR/1 JOB {job}\n")
b = ask(f"MEMATTR/1 JOB {job} UID {uid}\n")
print(repr(a), repr(b))
sys.exit(0 if a.startswith("ERR ambiguous ") and b.startswith("JOB running") else 1)
EOF
log "root: --job $J2 refused naming both users; --job-user picks O's ranks; socket: ambiguous unless a uid is named"

wait_exit "$PJ2" 60 || fail "job $J2 did not end"
[ "$WAIT_RC" -eq 0 ] || fail "job $J2 exited $WAIT_RC: $(tail -5 "$TMPD/jobJ2.out")"
kill "$IMP2" 2>/dev/null || true
wait_exit "$IMP2" 10 || true
stop_daemon
wait_no_bpf_leftovers 10
pass
