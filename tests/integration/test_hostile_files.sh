#!/bin/bash
# Files planted where the tool reads as root (issue 13, findings 4 and 5):
# - `--spec` on a FIFO, on /dev/zero, through a symlink or a hard link in a
#   directory the job's user owns: refused at once with one line naming the
#   file, non-zero exit, nothing created or attached (a FIFO used to block
#   the tool forever, /dev/zero to grow it by gigabytes and then pass as an
#   empty spec);
# - `report` run by root in the user's run directory, where run_info.csv is
#   a hard link to a root-only file (possible with fs.protected_hardlinks=0)
#   or a summary.csv is a FIFO: refused, and not a byte of the root-only
#   file in report.html (there is none).
# - (issue 13) a FIFO, a symlink to a root-only file and a hard link to it
#   planted at rank-0.csv, rank-1.csv and rank-2.csv of an output directory
#   the job's user owns, traced as root: nothing written through them (the
#   file unchanged, the FIFO and the link still there), and no timeline lost
#   silently: each is written beside, as rank-R.1.csv (made with O_EXCL |
#   O_NOFOLLOW), with one stderr line saying where; exit 0 since nothing is
#   missing; run_info.csv counts them (timelines_renamed). It used to lose
#   those ranks' timelines with one line and exit 0.
# - the same run's run_info.csv carries the counters of lost precision
#   (events_unknown_pid, events_unplaced, processes_refused_map_full), the
#   same figures as the terminal summary.
source "$(dirname "$0")/lib.sh"

FAILED=0
bad() {
	printf 'FAIL: %s: %s\n' "$TEST_NAME" "$*"
	FAILED=$((FAILED + 1))
}

# refused NAME PATTERN OUT -- ARGS...: memattr-bpf ARGS exits non-zero within
# 10 s, one stderr line matching PATTERN, OUT (a path or -) not created.
refused() {
	local name=$1 pat=$2 out=$3 rc=0 err=$TMPD/err-$1 t0=$EPOCHREALTIME
	shift 4
	timeout -s KILL 30 "$MEMATTR_BIN" "$@" >"$TMPD/out-$name" 2>"$err" || rc=$?
	log "$name: exit $rc after $(seconds_since "$t0") s: $(head -c 300 "$err" | tr '\n' '|')"
	if [ "$rc" -eq 0 ]; then
		bad "$name: exit status 0, expected a refusal"
	elif [ "$rc" -eq 137 ]; then
		bad "$name: still running after 30 s (killed)"
	fi
	[ "$(wc -l <"$err")" -eq 1 ] || bad "$name: expected one stderr line: $(head -c 500 "$err")"
	grep -Eq -- "$pat" "$err" || bad "$name: stderr does not match '$pat': $(cat "$err")"
	[ "$out" = - ] || [ ! -e "$out" ] || bad "$name: $out was created"
	"$PY" "$IT_DIR/bpf_leftovers.py" || bad "$name: BPF programs/links left loaded"
}

it_setup
as_user sleep 300 &
SLEEP_RUNUSER=$!
track_pid "$SLEEP_RUNUSER"
SLEEP_PID=$(find_descendant "$SLEEP_RUNUSER" sleep 10) || fail "cannot start a sleep as $TEST_USER"
track_pid "$SLEEP_PID"

# The user's own directory, where they can plant anything.
U=$TMPD/user
install -d -o "$TEST_USER" -m 0755 "$U"
as_user mkfifo "$U/fifo.spec"
as_user sh -c "printf 'component mpi\nlibrary libfoo.so\n' >'$U/real.spec'"
as_user ln -s "$U/real.spec" "$U/link.spec"
# A root-only file hard-linked into the user's directory (root makes the
# link here; with fs.protected_hardlinks=0 the user could).
SECRET=$TMPD/secret
printf 'key,value\nsecret,TOPSECRET-%s\n' "$RANDOM$RANDOM" >"$SECRET"
chmod 0600 "$SECRET"
ln "$SECRET" "$U/hard.spec"

refused spec-fifo "$U/fifo.spec: not a regular file" "$TMPD/o1" -- \
	--pid "$SLEEP_PID" --spec "$U/fifo.spec" --output "$TMPD/o1" --duration 1
refused spec-dev-zero "/dev/zero: not a regular file" "$TMPD/o2" -- \
	--pid "$SLEEP_PID" --spec /dev/zero --output "$TMPD/o2" --duration 1
refused spec-symlink "$U/link.spec: is a symlink" "$TMPD/o3" -- \
	--pid "$SLEEP_PID" --spec "$U/link.spec" --output "$TMPD/o3" --duration 1
refused spec-hardlink "$U/hard.spec: has other hard links" "$TMPD/o4" -- \
	--pid "$SLEEP_PID" --spec "$U/hard.spec" --output "$TMPD/o4" --duration 1
grep -rq TOPSECRET "$TMPD"/err-* && bad "spec-hardlink: the root-only file's content reached stderr"

# report, as root, in directories the user owns.
HDR="time_s,rank,pid,component,rss_bytes,pss_bytes"
newrun() {
	install -d -o "$TEST_USER" -m 0755 "$U/$1"
	printf '%s\n0.100,0,100,total,3000,1500\n0.100,0,100,app,3000,1500\n' "$HDR" >"$U/$1/rank-0.csv"
	chown "$TEST_USER" "$U/$1/rank-0.csv"
	echo "$U/$1"
}
d=$(newrun hardlink)
ln "$SECRET" "$d/run_info.csv"
refused report-hardlink "$d/run_info.csv: cannot open: has other hard links" - -- report "$d"
[ ! -e "$d/report.html" ] || bad "report-hardlink: report.html written"
grep -rq TOPSECRET "$d" --exclude=run_info.csv && bad "report-hardlink: the root-only file's content is in $d"
d=$(newrun fifo)
as_user mkfifo "$d/summary.csv"
refused report-fifo "$d/summary.csv: cannot open: not a regular file" - -- report "$d"
# The same directory without the planted file: a report, owned by the user.
d=$(newrun good)
"$MEMATTR_BIN" report "$d" >/dev/null 2>"$TMPD/err-good" || bad "report-good: $(cat "$TMPD/err-good")"
[ "$(stat -c %U "$d/report.html" 2>/dev/null)" = "$TEST_USER" ] || bad "report-good: report.html not the user's"

# Files planted where rank files go, in the user's output directory.
start_job 3 -- "$TMPD/bin/mpi_hold" --log-dir "$LOGS" --hold-mib 2 --hold-s 120 --tick-ms 50 \
	--stop-file "$STOP_FILE"
wait_ranks 3 30
wait_events hold ready 3 30
O=$U/out
install -d -o "$TEST_USER" -m 0755 "$O"
as_user mkfifo "$O/rank-0.csv"
as_user ln -s "$SECRET" "$O/rank-1.csv"
ln "$SECRET" "$O/rank-2.csv"	# root makes it; with fs.protected_hardlinks=0 the user could
before=$(sha256sum <"$SECRET")
rc=0
timeout -s KILL 30 "$MEMATTR_BIN" --job "$MPIRUN_PID" --output "$O" --duration 2 \
	>"$TMPD/out-planted" 2>"$TMPD/err-planted" || rc=$?
log "planted: exit $rc: $(tr '\n' '|' <"$TMPD/err-planted")"
[ "$rc" -eq 0 ] || bad "planted: exit status $rc, expected 0 (every timeline written)"
[ "$(sha256sum <"$SECRET")" = "$before" ] || bad "planted: the root-only file was written through a link"
[ "$(stat -c %a "$SECRET")" = 600 ] || bad "planted: the root-only file's mode changed"
[ -p "$O/rank-0.csv" ] || bad "planted: the FIFO was replaced"
[ -L "$O/rank-1.csv" ] || bad "planted: the symlink was replaced"
[ "$O/rank-2.csv" -ef "$SECRET" ] || bad "planted: the hard link was replaced"
for r in 0 1 2; do
	case $r in 0) what="a FIFO" ;; 1) what="a symlink" ;; 2) what="a hard link" ;; esac
	grep -q "^memattr-bpf: $O/rank-$r.csv is $what, not written through: this timeline is in rank-$r.1.csv\$" "$TMPD/err-planted" ||
		bad "planted: no line saying rank-$r.csv is $what and the timeline is in rank-$r.1.csv"
	f=$O/rank-$r.1.csv
	if [ ! -s "$f" ]; then
		bad "planted: rank $r's timeline is lost (no $f)"
		continue
	fi
	head -n 1 "$f" | grep -q '^time_s,rank,pid,component,rss_bytes,pss_bytes$' || bad "planted: $f has no header"
	[ "$(awk -F, 'NR > 1 && $4 == "total" && $2 == '"$r"'' "$f" | wc -l)" -ge 2 ] ||
		bad "planted: $f holds fewer than 2 samples of rank $r"
done
[ -s "$O/rank-0.1.csv" ] && [ "$(stat -c %a "$O/rank-0.1.csv")" != 640 ] && bad "planted: rank-0.1.csv is not 0640"
[ "$(wc -l <"$TMPD/err-planted")" -eq 4 ] || bad "planted: expected 4 stderr lines (tracing, 3 planted): $(cat "$TMPD/err-planted")"
info() { sed -n "s/^$1,//p" "$O/run_info.csv"; }
[ "$(info timelines_renamed)" = 3 ] || bad "planted: run_info.csv timelines_renamed is '$(info timelines_renamed)', expected 3"
# Lost precision is counted where the user looks: run_info.csv and the terminal.
for k in events_unknown_pid events_unplaced processes_refused_map_full output_errors; do
	[[ "$(info $k)" =~ ^[0-9]+$ ]] || bad "run_info.csv has no count $k"
done
term=$(grep '^events of unknown processes:' "$TMPD/out-planted" || true)
[ "$term" = "events of unknown processes: $(info events_unknown_pid); fault addresses outside known regions: $(info events_unplaced) (reread from maps)" ] ||
	bad "terminal summary and run_info.csv disagree on lost precision: '$term' vs $(info events_unknown_pid)/$(info events_unplaced)"
log "planted: in $O: $(ls -A "$O" | tr '\n' ' '); lost precision: unknown pid $(info events_unknown_pid), unplaced $(info events_unplaced), map full $(info processes_refused_map_full)"
# The kernel finishes the detach after the tool's exit (lib.sh): allow it its seconds.
check_no_bpf_leftovers
touch "$STOP_FILE"
wait_job_ok 60

[ "$FAILED" -eq 0 ] || fail "$FAILED check(s) failed"
pass
