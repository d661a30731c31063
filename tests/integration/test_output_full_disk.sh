#!/bin/bash
# A full disk during a run (issue 13): --output on a 200 KiB tmpfs, a 4-rank
# job traced with --heap every 20 ms, so the disk fills within seconds.
# It used to exit 0 saying "CSVs in ...", with rank files cut mid-line,
# summary.csv never written, a 0-byte temporary file left and only "cannot
# write run_info.csv" on stderr. Now:
# - every file that could not be written whole gets one stderr line naming
#   it with strerror ("No space left on device"), once, not every sample;
# - the tool keeps tracing to --duration, then exits non-zero saying the
#   results are incomplete, and the terminal summary says INCOMPLETE;
# - no rank file holds a cut row (each ends in a newline, each row has its
#   6 fields) and no temporary file is left in the output directory;
# - with --compress, each rank-R.csv.gz is cut back to its last sync flush:
#   zcat reads whole rows only.
source "$(dirname "$0")/lib.sh"

NP=4
DURATION=${FULL_DISK_DURATION:-6}
# 20 ms: a sample with --heap outlasts it, which once made the tool wait for
# an event past --duration (a negative poll timeout); checked here too.
INTERVAL=${FULL_DISK_INTERVAL_MS:-20}
FULL=""

# The tmpfs goes whatever happens; then the usual clean-up.
full_cleanup() {
	local rc=$?
	set +e
	# The tool holds files there: stop it (ours, by pid) before unmounting.
	if [ -n "${TOOL_PID:-}" ] && pid_running "$TOOL_PID"; then
		kill -TERM "$TOOL_PID"
		wait_exit "$TOOL_PID" 10 || kill -KILL "$TOOL_PID"
	fi
	if [ -n "$FULL" ] && mountpoint -q "$FULL"; then
		umount "$FULL" || umount -l "$FULL"
	fi
	(exit "$rc")
	it_cleanup
}

it_setup
trap full_cleanup EXIT
FULL=$TMPD/full
mkdir "$FULL"
mount -t tmpfs -o size=200k,mode=0755 tmpfs "$FULL" || fail "cannot mount a tmpfs on $FULL"

start_job "$NP" -- "$TMPD/bin/mpi_hold" --log-dir "$LOGS" --hold-mib 4 --hold-s 120 \
	--tick-ms 20 --stop-file "$STOP_FILE"
wait_ranks "$NP" 30
wait_events hold ready "$NP" 30

OUT=$FULL/out
start_tool --job "$MPIRUN_PID" --output "$OUT" --heap --interval "$INTERVAL" --duration "$DURATION"
wait_tool_ready 30
wait_exit "$TOOL_PID" $((DURATION + 30)) || fail "tool still running $((DURATION + 30))s after start"
log "tool exited $WAIT_RC; stderr: $(tr '\n' '|' <"$TOOL_ERR" | head -c 1500)"
log "tmpfs: $(df -k --output=used,size "$FULL" | tail -1)"

# The disk did fill (else this test proves nothing).
grep -q "No space left on device" "$TOOL_ERR" ||
	fail "no 'No space left on device' on stderr: the disk did not fill, or the failure went unsaid: $(cat "$TOOL_ERR")"
[ "$WAIT_RC" -ne 0 ] || fail "exit status 0 with files that could not be written"
[ "$WAIT_RC" -eq 1 ] || fail "exit status $WAIT_RC, expected 1 (killed? a sanitizer report?): $(tail -5 "$TOOL_ERR")"
# One line per file: each names a file of the output directory, none twice.
grep "^memattr-bpf: cannot write $OUT/[^ :]*: No space left on device" "$TOOL_ERR" >"$TMPD/errs" ||
	fail "no 'cannot write $OUT/FILE: No space left on device' line: $(cat "$TOOL_ERR")"
dups=$(sed 's/^memattr-bpf: cannot write \([^:]*\):.*/\1/' "$TMPD/errs" | sort | uniq -d)
[ -z "$dups" ] || fail "files reported more than once: $dups"
grep -q "could not be written whole.*incomplete" "$TOOL_ERR" || fail "no final 'results are incomplete' line"
grep -q "INCOMPLETE" "$TMPD/tool.out" || fail "the terminal summary does not say INCOMPLETE: $(head -2 "$TMPD/tool.out")"
log "$(wc -l <"$TMPD/errs") file(s) reported: $(sed 's/^memattr-bpf: cannot write //' "$TMPD/errs" | cut -d: -f1 | xargs -n1 basename | tr '\n' ' ')"

# Kept tracing: the tool ran to --duration, not stopped at the first error.
total=$(awk -v a="$TOOL_START" -v b="$EXITED_AT" 'BEGIN { printf "%.2f", b - a }')
awk -v t="$total" -v d="$DURATION" 'BEGIN { exit !(t >= d - 0.2) }' || fail "tool stopped after ${total}s, before --duration $DURATION"

# No temporary file left, no cut row.
left=$(find "$OUT" -name '.*tmp*' -o -name '.memattr-probe*' | head)
[ -z "$left" ] || fail "temporary files left: $left"
n=0
for f in "$OUT"/rank-*.csv "$OUT"/pid-*.csv; do
	[ -e "$f" ] || continue
	n=$((n + 1))
	[ ! -s "$f" ] || [ "$(tail -c 1 "$f" | od -An -c | tr -d ' ')" = '\n' ] || fail "$(basename "$f") ends in a cut row: $(tail -c 80 "$f")"
	awk -F, 'NF != 6 { print FILENAME ":" NR ": " $0; bad = 1 } END { exit bad }' "$f" >&2 ||
		fail "$(basename "$f") holds rows without their 6 fields"
	[ ! -s "$f" ] || head -n 1 "$f" | grep -q '^time_s,rank,pid,component,rss_bytes,pss_bytes$' ||
		fail "$(basename "$f") does not start with the header"
done
[ "$n" -gt 0 ] || fail "no rank file at all"
log "$n rank files, whole rows only; in $OUT: $(ls -A "$OUT" | tr '\n' ' ')"
check_no_bpf_leftovers

# The same with --compress: a gzip stream cannot be cut back and go on, so
# it is cut back to its last sync flush and ends there: zcat reads whole
# rows up to the failure ("unexpected end of file" after them).
rm -rf "$OUT"
# gzip'ed rows are ~10 times smaller: leave 24 KiB free so they fill it too.
avail=$(df -k --output=avail "$FULL" | tail -1 | tr -d ' ')
[ "$avail" -gt 24 ] && head -c $(((avail - 24) * 1024)) /dev/zero >"$FULL/filler" 2>/dev/null || true
start_tool --job "$MPIRUN_PID" --output "$OUT" --compress --heap --interval "$INTERVAL" --duration 4
wait_tool_ready 30
wait_exit "$TOOL_PID" 40 || fail "--compress: tool still running 40s after start"
log "--compress: exit $WAIT_RC; stderr: $(tr '\n' '|' <"$TOOL_ERR" | head -c 600)"
[ "$WAIT_RC" -eq 1 ] || fail "--compress: exit status $WAIT_RC, expected 1: $(tail -5 "$TOOL_ERR")"
grep -q "^memattr-bpf: cannot write $OUT/rank-[0-9]*\.csv\.gz: No space left on device" "$TOOL_ERR" ||
	fail "--compress: no 'cannot write rank-R.csv.gz: No space left on device' line: $(cat "$TOOL_ERR")"
# zcat fails on a stream without its end: what it read is what is checked.
unz() { zcat "$1" 2>/dev/null || true; }
for f in "$OUT"/rank-*.csv.gz; do
	[ -s "$f" ] || continue
	rows=$(unz "$f" | wc -l)
	unz "$f" | awk -F, 'NF != 6 { bad = 1 } END { exit bad }' ||
		fail "--compress: $(basename "$f") holds a cut row: $(unz "$f" | tail -c 80)"
	[ "$(unz "$f" | tail -c 1 | od -An -c | tr -d ' ')" = '\n' ] ||
		fail "--compress: $(basename "$f") ends in a cut row"
	log "--compress: $(basename "$f"): $rows whole rows"
done
left=$(find "$OUT" -name '.*tmp*' | head)
[ -z "$left" ] || fail "--compress: temporary files left: $left"
check_no_bpf_leftovers

touch "$STOP_FILE"
wait_job_ok 60
pass
