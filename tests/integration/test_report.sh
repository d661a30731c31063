#!/bin/bash
# `memattr-bpf report DIR` on a real run, as a user would: trace a 4-rank
# mpi_phases job (the CSVs handed to the job's user, as under sudo), make the
# report as that user (no root) once while the tracer is still writing and
# once after, then open the page in headless Chromium: it must load with no
# error, hold every chart as SVG and fetch nothing. Synthetic runs cover what
# a 4-rank run cannot: 256 ranks, a run cut mid-line, extra columns, 1 rank.
# The screenshots are kept (the scratch dir is kept) and their paths printed.
source "$(dirname "$0")/lib.sh"

# The screenshots are this test's artifacts: keep the scratch dir unless told.
KEEP_TMP=${KEEP_TMP-1}

NP=4
MALLOC_MIB=8
MMAP_MIB=4
ALLOC_MEM_MIB=4
CHROMIUM=${CHROMIUM:-chromium}

command -v "$CHROMIUM" >/dev/null || fail "no $CHROMIUM (tools/install-deps.sh installs it)"
it_setup
cp "$MEMATTR_BIN" "$TMPD/bin/memattr-bpf"	# the user may not reach the repo
chmod 755 "$TMPD/bin/memattr-bpf"
uid=$(id -u "$TEST_USER")
gid=$(id -g "$TEST_USER")

# report DIR as the test user; RC, and its stdout/stderr in $TMPD/report.{out,err}.
report_as_user() {
	RC=0
	as_user "$TMPD/bin/memattr-bpf" report "$1" >"$TMPD/report.out" 2>"$TMPD/report.err" || RC=$?
}

# check_page HTML: self-contained, well-formed SVGs, nothing half written.
check_page() {
	local html=$1 dir
	dir=$(dirname "$html")
	[ -f "$html" ] || fail "no $html"
	assert_eq "$(stat -c %a "$html")" 640 "mode of $html"
	ls -A "$dir" | grep -q '^\.report\.html\.tmp' && fail "temporary file left in $dir"
	# Nothing fetched: no script, no external reference (the SVG namespace is a name, not a fetch).
	if grep -Eiq '<script|<link|<img|@import|url\(|(src|href)=' "$html"; then
		fail "$html references something outside itself: $(grep -Eio '<script|<link|<img|@import|url\(|(src|href)=[^ >]*' "$html" | head -3)"
	fi
	if grep -Eo 'https?://[^" ]*' "$html" | grep -vqx 'http://www.w3.org/2000/svg'; then
		fail "$html names an outside address: $(grep -Eo 'https?://[^" ]*' "$html" | grep -vx 'http://www.w3.org/2000/svg' | head -3)"
	fi
	"$PY" - "$html" <<'EOF' || fail "malformed SVG in $html (above)"
import re, sys
import xml.etree.ElementTree as ET
page = open(sys.argv[1], encoding="utf-8").read()
svgs = re.findall(r"<svg\b.*?</svg>", page, re.S)
if not svgs:
    sys.exit("no <svg> at all")
for i, s in enumerate(svgs):
    try:
        ET.fromstring(s.replace("&plusmn;", "+-").replace("&times;", "x"))
    except ET.ParseError as e:
        sys.exit(f"SVG #{i}: {e}")
if not page.rstrip().endswith("</html>"):
    sys.exit("page does not end in </html>")
EOF
}

# render HTML PNG HEIGHT: screenshot and DOM from headless Chromium; the page
# must load with no console or load error.
render() {
	local html=$1 png=$2 height=$3 profile log
	profile=$(mktemp -d "$TMPD/chromium.XXXXXX")
	log=$png.log
	local flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
		--disable-background-networking --disable-component-update --disable-sync
		--enable-logging=stderr --v=0 --user-data-dir="$profile")
	timeout 120 "$CHROMIUM" "${flags[@]}" --window-size=1400,"$height" \
		--screenshot="$png" "file://$html" >"$log" 2>&1 ||
		fail "chromium --screenshot failed: $(tail -5 "$log")"
	[ -s "$png" ] || fail "chromium wrote no screenshot: $(tail -5 "$log")"
	timeout 120 "$CHROMIUM" "${flags[@]}" --dump-dom "file://$html" >"$png.dom.html" 2>>"$log" ||
		fail "chromium --dump-dom failed: $(tail -5 "$log")"
	rm -rf "$profile"
	if grep -Eq 'CONSOLE|Uncaught|net::ERR_|Failed to load|Not allowed to load' "$log"; then
		fail "the page logged errors in Chromium: $(grep -E 'CONSOLE|Uncaught|net::ERR_|Failed to load|Not allowed to load' "$log" | head -3)"
	fi
	DOM_SVGS=$(grep -o '<svg' "$png.dom.html" | wc -l)
	[ "$DOM_SVGS" -eq "$(grep -o '<svg' "$html" | wc -l)" ] ||
		fail "Chromium's DOM has $DOM_SVGS SVGs, the file $(grep -o '<svg' "$html" | wc -l)"
	# A blank or error page compresses to a few KiB.
	[ "$(stat -c %s "$png")" -gt 40000 ] || fail "screenshot $png is nearly empty"
}

dom_has() {	# dom_has TEXT...: every text is in the rendered DOM of $1's page
	local dom=$1 t
	shift
	for t in "$@"; do
		grep -qF -- "$t" "$dom" || fail "rendered page lacks '$t'"
	done
}

# --- a real run ------------------------------------------------------------
start_job "$NP" -- "$TMPD/bin/mpi_phases" --log-dir "$LOGS" --go-file "$GO_FILE" \
	--malloc-mib "$MALLOC_MIB" --mmap-mib "$MMAP_MIB" --alloc-mem-mib "$ALLOC_MEM_MIB" \
	--plateau-ms 700
wait_ranks "$NP" 30
wait_events phases ready "$NP" 30

OUT=$TMPD/out
# As under sudo: the CSVs are handed to the job's user, who makes the report.
SUDO_UID=$uid SUDO_GID=$gid start_tool --job "$MPIRUN_PID" --output "$OUT"
wait_tool_ready 30
go

# While the tracer still writes: the report must cope with cut lines.
sleep 1.5
pid_running "$TOOL_PID" || fail "the tool ended before the mid-run report"
report_as_user "$OUT"
[ "$RC" -eq 0 ] || fail "report during the run exited $RC: $(cat "$TMPD/report.err")"
check_page "$OUT/report.html"
log "mid-run report ok: $(cat "$TMPD/report.out")"

wait_job_ok 90
wait_tool_ok 15 "the job ended"
check_no_bpf_leftovers

report_as_user "$OUT"
[ "$RC" -eq 0 ] || fail "report exited $RC: $(cat "$TMPD/report.err")"
[ ! -s "$TMPD/report.err" ] || fail "report wrote to stderr: $(cat "$TMPD/report.err")"
grep -q "wrote $OUT/report.html" "$TMPD/report.out" || fail "report did not say where it wrote: $(cat "$TMPD/report.out")"
assert_eq "$(stat -c %U "$OUT/report.html")" "$TEST_USER" "owner of report.html"
check_page "$OUT/report.html"
grep -q 'Run still in progress' "$OUT/report.html" && fail "finished run reported as in progress"

SHOT=$TMPD/report.png
render "$OUT/report.html" "$SHOT" 3000
# legend, job chart, 4 panels, 2 heat maps at least
[ "$DOM_SVGS" -ge 8 ] || fail "only $DOM_SVGS SVGs in the rendered page"
dom_has "$SHOT.dom.html" "Job total over time" "Peaks across ranks" "Each process over time" \
	"Ranks × time" "MPI library (mpi)" "rank 0 (pid" "rank 3 (pid" "job peak" \
	"mean ± std" "MPI share at the peak" "Per process"
log "report of the real run renders: $DOM_SVGS SVGs"

# --- synthetic runs: 256 ranks, in progress, extra columns, one rank ---------
FAKE=$TMPD/fake
mkdir -p "$FAKE"
"$PY" "$IT_DIR/fake_run.py" "$FAKE/r256" --ranks 256 --seconds 30 --calls --info
"$PY" "$IT_DIR/fake_run.py" "$FAKE/progress" --ranks 3 --seconds 5 --in-progress
"$PY" "$IT_DIR/fake_run.py" "$FAKE/extra" --ranks 2 --seconds 3 --extra-columns
"$PY" "$IT_DIR/fake_run.py" "$FAKE/one" --ranks 1 --seconds 3
chown -R "$TEST_USER" "$FAKE"
for d in r256 progress extra one; do
	t0=$EPOCHREALTIME
	report_as_user "$FAKE/$d"
	[ "$RC" -eq 0 ] || fail "report of synthetic run $d exited $RC: $(cat "$TMPD/report.err")"
	check_page "$FAKE/$d/report.html"
	log "synthetic $d: ok in $(seconds_since "$t0")s, $(stat -c %s "$FAKE/$d/report.html") bytes"
done
[ "$(stat -c %s "$FAKE/r256/report.html")" -lt 8000000 ] || fail "256-rank report is over 8 MB"
grep -q 'The 12 processes with the largest peaks' "$FAKE/r256/report.html" ||
	fail "256 ranks: no top-12 small multiples"
grep -q '321 events were dropped' "$FAKE/r256/report.html" || fail "256 ranks: drops from run_info.csv not shown"
grep -q 'MPI_Alltoall' "$FAKE/r256/report.html" || fail "256 ranks: MPI-function table missing"
grep -q 'Run still in progress' "$FAKE/progress/report.html" || fail "cut lines not reported as a run in progress"
SHOT256=$TMPD/report-256.png
render "$FAKE/r256/report.html" "$SHOT256" 4200
dom_has "$SHOT256.dom.html" "rank 240" "Which MPI calls made the library grow" "dropped_events"

log "screenshot of the 4-rank run: $SHOT"
log "screenshot of a synthetic 256-rank run: $SHOT256"
pass
