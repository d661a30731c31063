#!/bin/bash
# Users without sudo: while the daemon runs, an ordinary user's own
# `memattr-bpf --job ID` is served over the daemon's unix socket. Three
# overlapping jobs of two users. User 1's client, run as user 1, follows
# job A to its end and exits 0; its directory holds plain rank-R.csv whose
# bytes are exactly the spool's rank-R.csv.gz inflated, the spool's
# summary.csv, run_info.csv, mpi_calls.csv and alloc_stacks.csv, all owned by user 1, and check_csv.py
# accepts it. User 2 asking for job A is refused ("belongs to another
# user"), as is a job nobody runs ("no job ... is traced"), and --heap
# (root only): each with a non-zero exit and no directory. User 2's own
# job B with --duration stops on time with what it copied. Root's direct
# attach to job C works next to the daemon. The socket is 0666 in a
# root-only directory and goes with the daemon; a second daemon cannot
# take it, a directory others may write or a plain file on its path is
# refused, a stale socket is replaced.
# Note: the daemon traces every job on the node; other tests' jobs may show
# up in its log, so only this test's job IDs are looked at.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"

it_setup
ensure_second_user
SPOOL=$TMPD/spool
SOCKDIR=$TMPD/run	# root's, 0755: the daemon refuses a directory others may write
install -d -m 0755 "$SOCKDIR"
SOCK=$SOCKDIR/memattr.sock
BASE=$((500000 + RANDOM * 32 + RANDOM % 32))
A=$BASE B=$((BASE + 1)) C=$((BASE + 2)) NOJOB=$((BASE + 9))
# The users run their own copy: the repo may sit where they cannot reach.
install -m 0755 "$MEMATTR_BIN" "$TMPD/bin/memattr-bpf"
U1=$TMPD/u1 U2=$TMPD/u2
install -d -o "$TEST_USER" -m 0700 "$U1"
install -d -o "$TEST_USER2" -m 0700 "$U2"
as_user2() {
	runuser -u "$TEST_USER2" -- env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$U2" USER="$TEST_USER2" \
		LOGNAME="$TEST_USER2" "$@"
}

start_daemon --spool "$SPOOL" --listen none --socket "$SOCK" --interval 200
[ -S "$SOCK" ] || fail "no socket at $SOCK: $(cat "$DAEMON_ERR")"
[ "$(stat -c '%a %U' "$SOCK")" = "666 root" ] || fail "socket is $(stat -c '%a %U' "$SOCK"), expected 666 root"

user_job "$TEST_USER" 2 "$A" 8 8 "$TMPD/jobA.out"; PA=$UJOB_PID
ADIR=$(user_spool_dir "$SPOOL" "$TEST_USER" "$A") BDIR=$(user_spool_dir "$SPOOL" "$TEST_USER2" "$B")
user_job "$TEST_USER2" 1 "$B" 4 16 "$TMPD/jobB.out"; PB=$UJOB_PID
user_job "$TEST_USER" 1 "$C" 4 6 "$TMPD/jobC.out"; PC=$UJOB_PID
for id in "$A" "$B" "$C"; do
	wait_daemon_line "job $id of " 15 || fail "daemon did not pick up job $id: $(cat "$DAEMON_ERR")"
done

# Root attaches directly, as without the daemon.
"$MEMATTR_BIN" --job "$C" --output "$TMPD/rootC" --quiet >"$TMPD/rootC.out" 2>&1 &
ROOT_PID=$!
track_pid "$ROOT_PID"

# User 1 follows their own job A through the daemon, no sudo.
as_user "$TMPD/bin/memattr-bpf" --job "$A" --output "$U1/A" --socket "$SOCK" \
	>"$TMPD/clientA.out" 2>"$TMPD/clientA.err" &
CA=$!
track_pid "$CA"

# User 2: job A is not theirs; a job nobody runs; a root-only option.
refused() {	# WHAT EXPECTED_MESSAGE DIR ARGS...
	local what=$1 msg=$2 dir=$3 rc=0
	shift 3
	as_user2 "$TMPD/bin/memattr-bpf" "$@" --output "$dir" --socket "$SOCK" >"$TMPD/r.out" 2>"$TMPD/r.err" || rc=$?
	[ "$rc" -ne 0 ] || fail "$what: exit 0, expected a refusal"
	grep -qF -- "$msg" "$TMPD/r.err" || fail "$what: stderr '$(cat "$TMPD/r.err")', expected '$msg'"
	[ "$(wc -l <"$TMPD/r.err")" -eq 1 ] || fail "$what: more than one line: $(cat "$TMPD/r.err")"
	[ ! -e "$dir" ] || fail "$what: refused, yet $dir was created"
	log "$what: refused (exit $rc): $(cat "$TMPD/r.err")"
}
refused "user 2 asks for user 1's job" "memattr-bpf: job $A belongs to another user" "$U2/A" --job "$A"
refused "user 2 asks for a job nobody runs" "memattr-bpf: no job $NOJOB is traced by the daemon on this node" \
	"$U2/none" --job "$NOJOB"
refused "--heap without root" "--heap needs root" "$U2/heap" --job "$B" --heap

# User 2's own job, for 2 s: stops on time, exit 0, with what it copied.
t0=$EPOCHREALTIME
as_user2 "$TMPD/bin/memattr-bpf" --job "$B" --output "$U2/B" --socket "$SOCK" --duration 2 \
	>"$TMPD/clientB.out" 2>"$TMPD/clientB.err" || fail "user 2's own job B: exit $?: $(cat "$TMPD/clientB.err")"
secs=$(seconds_since "$t0")
awk -v s="$secs" 'BEGIN { exit !(s < 6) }' || fail "--duration 2 took ${secs}s"
grep -q ",0,[0-9]*,total," "$U2/B/rank-0.csv" || fail "user 2's copy of job B has no rows: $(head -3 "$U2/B/rank-0.csv")"
pid_running "$PB" || fail "job B ended before --duration: the test proves nothing about it"
log "user 2's own job B, --duration 2: exit 0 after ${secs}s, $(grep -c ',total,' "$U2/B/rank-0.csv") samples"

# ... and Ctrl-C: what it copied is flushed, exit 0. (The daemon writes a
# job's first summary.csv 5 s in: wait for it, so the copy must have one.)
t0=$EPOCHREALTIME
until [ -s "$BDIR/summary.csv" ]; do
	elapsed_since "$t0" 10 && fail "no summary.csv in the spool of job $B after 10 s"
	sleep 0.1
done
as_user2 "$TMPD/bin/memattr-bpf" --job "$B" --output "$U2/B-int" --socket "$SOCK" \
	>"$TMPD/clientBi.out" 2>"$TMPD/clientBi.err" &
CBI=$!
track_pid "$CBI"
cpid=$(find_descendant "$CBI" memattr-bpf 10) || fail "user 2's client did not start: $(cat "$TMPD/clientBi.err")"
sleep 1.5
kill -INT "$cpid"
wait_exit "$CBI" 10 || fail "user 2's client still running 10 s after SIGINT"
[ "$WAIT_RC" -eq 0 ] || fail "user 2's client exited $WAIT_RC after SIGINT: $(cat "$TMPD/clientBi.err")"
grep -q "stopped" "$TMPD/clientBi.err" || fail "client did not say it stopped: $(cat "$TMPD/clientBi.err")"
grep -q ",0,[0-9]*,total," "$U2/B-int/rank-0.csv" || fail "nothing copied before SIGINT: $(head -3 "$U2/B-int/rank-0.csv")"
[ -s "$U2/B-int/summary.csv" ] || fail "no summary.csv copied before SIGINT"
pid_running "$PB" || fail "job B ended before SIGINT: the test proves nothing about it"
log "user 2's own job B, SIGINT after 1.5 s: exit 0, $(grep -c ',total,' "$U2/B-int/rank-0.csv") samples kept"

# Hostile clients (user 2): 20 connections that say nothing, one request
# past 512 bytes, one that is not the protocol. Meanwhile another request
# is answered at once, and the daemon's sampling goes on.
cat >"$TMPD/hostile.py" <<'EOP'
import socket, sys, time
path, hold = sys.argv[1], float(sys.argv[2])
idle = []
for _ in range(20):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    idle.append(s)
def answer(data):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(5)
    s.connect(path)
    try:
        s.sendall(data)
        r = s.recv(512)
    except ConnectionResetError:
        return "closed"     # closed with the request unread
    except OSError as e:
        return "error " + str(e)
    return r.decode(errors="replace").strip() or "closed"
print("oversize:", answer(b"x" * 4096))
print("http:", answer(b"GET / HTTP/1.0\r\n\r\n"))
sys.stdout.flush()
time.sleep(hold)
EOP
chmod 644 "$TMPD/hostile.py"
before=$(zcat "$BDIR/rank-0.csv.gz" 2>/dev/null | grep -c ',total,' || true)
as_user2 "$PY" "$TMPD/hostile.py" "$SOCK" 3 >"$TMPD/hostile.out" 2>&1 &
HP=$!
track_pid "$HP"
wait_line_of "$HP" "$TMPD/hostile.out" '^http:' "hostile client"
t0=$EPOCHREALTIME
refused "a request while 20 silent connections are held" "no job $NOJOB is traced" "$U2/none" --job "$NOJOB"
secs=$(seconds_since "$t0")
awk -v s="$secs" 'BEGIN { exit !(s < 1.5) }' || fail "a request took ${secs}s while silent connections were held"
wait_exit "$HP" 10 || fail "hostile client did not finish"
after=$(zcat "$BDIR/rank-0.csv.gz" 2>/dev/null | grep -c ',total,' || true)
grep -qx 'oversize: closed' "$TMPD/hostile.out" || fail "a 4 KiB request was not dropped: $(cat "$TMPD/hostile.out")"
grep -q '^http: ERR bad ' "$TMPD/hostile.out" || fail "a non-protocol request got no ERR bad: $(cat "$TMPD/hostile.out")"
[ "$after" -ge $((before + 10)) ] || fail "job B's timeline grew $before -> $after samples in ~3.5 s of hostile clients (interval 200 ms)"
pid_running "$PB" || fail "job B ended during the hostile clients: the growth check proves nothing"
log "hostile clients: answered in ${secs}s, oversize dropped, non-protocol 'ERR bad', sampling went on ($before -> $after samples)"

# Job A ends: the client sees it from the daemon and exits 0 by itself.
wait_exit "$PA" 60 || fail "job $A did not end"
[ "$WAIT_RC" -eq 0 ] || fail "job $A exited $WAIT_RC: $(tail -5 "$TMPD/jobA.out")"
wait_exit "$CA" 20 || fail "user 1's client still running 20 s after job $A ended: $(cat "$TMPD/clientA.err")"
[ "$WAIT_RC" -eq 0 ] || fail "user 1's client exited $WAIT_RC: $(cat "$TMPD/clientA.err")"
grep -q "job ended" "$TMPD/clientA.err" || fail "client did not see the job end: $(cat "$TMPD/clientA.err")"
wait_daemon_line "job $A ended" 10 || fail "no end of job $A in the daemon's log"

# The same files as the spool, plain, the user's own.
for r in 0 1; do
	[ -f "$U1/A/rank-$r.csv" ] || fail "no $U1/A/rank-$r.csv: $(ls "$U1/A")"
	cmp -s <(zcat "$ADIR/rank-$r.csv.gz") "$U1/A/rank-$r.csv" ||
		fail "rank-$r.csv differs from the spool's: $(diff <(zcat "$ADIR/rank-$r.csv.gz") "$U1/A/rank-$r.csv" | head -5)"
done
for f in summary.csv run_info.csv mpi_calls.csv alloc_stacks.csv; do
	cmp -s "$ADIR/$f" "$U1/A/$f" || fail "$f differs from the spool's"
done
[ "$(ls "$U1/A" | sort | tr '\n' ' ')" = "alloc_stacks.csv mpi_calls.csv rank-0.csv rank-1.csv run_info.csv summary.csv " ] ||
	fail "unexpected files in $U1/A: $(ls -a "$U1/A")"
bad=$(find "$U1/A" ! -user "$TEST_USER" -o -perm /o=rwx | head -3)
[ -z "$bad" ] || fail "not the user's own, or open to others: $bad"
# The job ran to its end (its last samples free the hold): its peak, not
# its last sample, holds the 8 MiB (the daemon's attribution is tested by
# the other daemon tests; here, that the copy is whole).
run_checker "$U1/A" --ranks 2
for r in 0 1; do
	peak=$(awk -F, '$4 == "total" && $5 > m { m = $5 } END { print m + 0 }' "$U1/A/rank-$r.csv")
	[ "$peak" -ge $((8 << 20)) ] || fail "rank $r's peak total $peak < the 8 MiB it held"
done
log "user 1's copy of job $A: the spool's rows exactly, $(grep -c ',total,' "$U1/A/rank-0.csv") samples of rank 0"

# Root's own attach to C ran next to the daemon.
wait_exit "$PC" 60 || fail "job $C did not end"
wait_exit "$ROOT_PID" 20 || fail "root's direct --job $C still running after the job ended"
[ "$WAIT_RC" -eq 0 ] || fail "root's --job $C exited $WAIT_RC: $(cat "$TMPD/rootC.out")"
run_checker "$TMPD/rootC" --ranks 1
log "root's direct attach to job $C next to the daemon: exit 0"

# A second daemon may not take the socket of one that runs. (It stops
# before loading anything: the socket is set up before BPF.)
no_daemon() {	# WHAT EXPECTED_MESSAGE ARGS...
	local what=$1 msg=$2 rc=0
	shift 2
	timeout 20 "$MEMATTR_BIN" daemon --listen none --spool "$TMPD/spool2" "$@" >/dev/null 2>"$TMPD/d2.err" || rc=$?
	[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || fail "$what: daemon exit $rc, expected a refusal: $(cat "$TMPD/d2.err")"
	grep -qF -- "$msg" "$TMPD/d2.err" || fail "$what: '$(cat "$TMPD/d2.err")', expected '$msg'"
	log "$what: refused: $(cat "$TMPD/d2.err")"
}
no_daemon "second daemon on a live socket" "another memattr-bpf daemon serves it" --socket "$SOCK"

wait_exit "$PB" 60 || fail "job $B did not end"
stop_daemon
[ ! -e "$SOCK" ] || fail "socket $SOCK left behind after the daemon stopped"

# Where the socket may not go: a directory others may write, a file that is not a socket.
install -d -m 0777 "$TMPD/open"
no_daemon "socket directory writable by others" "must be root's and writable by root only" --socket "$TMPD/open/m.sock"
: >"$SOCKDIR/plain"
no_daemon "a plain file on the socket's path" "exists and is not a socket" --socket "$SOCKDIR/plain"
# A stale socket (a daemon killed with SIGKILL leaves one): replaced.
"$PY" -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$SOCK"
[ -S "$SOCK" ] || fail "could not make a stale socket"
start_daemon --spool "$TMPD/spool3" --listen none --socket "$SOCK"
refused "a job nobody runs, after a stale socket was replaced" "no job $NOJOB is traced" "$U2/none" --job "$NOJOB"
stop_daemon
[ ! -e "$SOCK" ] || fail "socket $SOCK left behind after the second daemon stopped"
wait_no_bpf_leftovers 10
pass
