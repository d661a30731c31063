#!/bin/bash
# The node service under a real Prometheus: `memattr-bpf daemon` runs, a
# 4-rank mpi_truth job of the test user starts after it (no attach step:
# its ranks are seen at exec), Debian's Prometheus scrapes the daemon every
# second, and the per-rank, per-component series it stored must match the
# workload's ground truth plateau by plateau (5%). Also: promtool accepts
# both expositions, node_exporter's textfile collector serves --textfile,
# the spool holds the job's gzip'ed timelines (0640, the user's group),
# the job's series vanish when it ends, and SIGTERM leaves nothing attached.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"

NP=4
JOB_ID=$((300000 + RANDOM * 32 + RANDOM % 32))

for tool in prometheus promtool prometheus-node-exporter curl; do
	command -v "$tool" >/dev/null || fail "$tool not installed (tools/install-deps.sh)"
done
it_setup
SPOOL=$TMPD/spool
TEXTFILE=$TMPD/textfile
mkdir -m 755 "$TEXTFILE"
PORT=$(free_port)
start_daemon --spool "$SPOOL" --listen "127.0.0.1:$PORT" --textfile "$TEXTFILE" --interval 100 --pss-interval 1000
check_tool_holds_bpf() { "$PY" "$IT_DIR/bpf_leftovers.py" --held-by "$DAEMON_PID" || fail "the daemon holds no BPF program named ma_*"; }
check_tool_holds_bpf
start_prometheus "127.0.0.1:$PORT"

start_job "$NP" -x "SLURM_JOB_ID=$JOB_ID" -- "$TMPD/bin/mpi_truth" --log-dir "$LOGS" \
	--go-file "$GO_FILE" --unit-mib 4 --plateau-ms 3000
wait_ranks "$NP" 30
wait_events truth ready "$NP" 30
# The ranks joined the job at their exec: the daemon says so, and the series appear.
t0=$EPOCHREALTIME
until [ -n "$(prom_value "count(memattr_rank_resident_bytes{job=\"$JOB_ID\",component=\"total\"})")" ] &&
	[ "$(prom_value "count(memattr_rank_resident_bytes{job=\"$JOB_ID\",component=\"total\"})")" = "$NP" ]; do
	elapsed_since "$t0" 20 && fail "Prometheus has no $NP rank series of job $JOB_ID after 20 s; daemon: $(cat "$DAEMON_ERR")"
	sleep 0.5
done
log "Prometheus sees the job's $NP ranks"

# Both formats, as scraped now, pass promtool's checks.
curl -fsS "http://127.0.0.1:$PORT/metrics" >"$TMPD/exposition.txt"
curl -fsS -H 'Accept: application/openmetrics-text; version=1.0.0' "http://127.0.0.1:$PORT/metrics" \
	-D "$TMPD/om.headers" >"$TMPD/exposition.om"
promtool check metrics <"$TMPD/exposition.txt" >"$TMPD/promtool.out" 2>&1 ||
	fail "promtool check metrics rejects the exposition: $(cat "$TMPD/promtool.out")"
log "promtool check metrics: accepted ($(grep -c "job=\"$JOB_ID\"" "$TMPD/exposition.txt") series of the job)"
grep -qi '^content-type: application/openmetrics-text; version=1.0.0' "$TMPD/om.headers" ||
	fail "OpenMetrics asked for, not served: $(cat "$TMPD/om.headers")"
[ "$(tail -n 1 "$TMPD/exposition.om")" = "# EOF" ] || fail "OpenMetrics exposition does not end in # EOF"
grep -q "^memattr_rank_resident_bytes{job=\"$JOB_ID\",user=\"$TEST_USER\",step=\"\",rank=\"0\",component=\"total\"} " \
	"$TMPD/exposition.txt" || fail "no rank 0 total series labelled job/user/step/rank/component"

# node_exporter's textfile collector serves --textfile's memattr.prom.
NE_PORT=$(free_port)
prometheus-node-exporter --web.listen-address="127.0.0.1:$NE_PORT" --collector.disable-defaults \
	--collector.textfile --collector.textfile.directory="$TEXTFILE" >"$TMPD/node_exporter.log" 2>&1 &
NE_PID=$!
track_pid "$NE_PID"
wait_http "http://127.0.0.1:$NE_PORT/metrics" 20
curl -fsS "http://127.0.0.1:$NE_PORT/metrics" >"$TMPD/node_exporter.txt"
grep -q "^memattr_rank_resident_bytes{component=\"total\",job=\"$JOB_ID\",rank=\"0\",step=\"\",user=\"$TEST_USER\"} " \
	"$TMPD/node_exporter.txt" || fail "node_exporter does not serve the textfile's series: $(grep -i 'textfile\|error' "$TMPD/node_exporter.txt" | head -5)"
grep -q '^node_textfile_scrape_error 0' "$TMPD/node_exporter.txt" ||
	fail "node_exporter's textfile collector reports an error: $(grep -i textfile "$TMPD/node_exporter.txt")"
log "node_exporter (pid $NE_PID) serves memattr.prom from the textfile collector"
stop_server "$NE_PID" node_exporter

# The job's spool, while it runs: gzip readable as it is written, the user's group.
JOBDIR=$(user_spool_dir "$SPOOL" "$TEST_USER" "$JOB_ID")
[ -d "$JOBDIR" ] || fail "no spool directory $JOBDIR"
for r in $(seq 0 $((NP - 1))); do
	f=$JOBDIR/rank-$r.csv.gz
	[ -f "$f" ] || fail "no $f"
	[ "$(stat -c '%a %U %G' "$f")" = "640 root $(id -gn "$TEST_USER")" ] ||
		fail "$f: mode/owner $(stat -c '%a %U %G' "$f"), expected 640 root $(id -gn "$TEST_USER")"
	rows=$(zcat "$f" 2>/dev/null | grep -c ',total,' || true)
	[ "$rows" -gt 0 ] || fail "$f: zcat reads no rows while the file is written"
done
# zcat says "unexpected end of file" of a stream still being written: the rows come first.
as_user zcat "$JOBDIR/rank-0.csv.gz" >"$TMPD/owner_read.csv" 2>"$TMPD/owner_read.err" || true
head -1 "$TMPD/owner_read.csv" | grep -q '^time_s,rank,pid,component,rss_bytes,pss_bytes' ||
	fail "the job's owner cannot read its rank file: $(cat "$TMPD/owner_read.err")"
log "spool $JOBDIR: rank files gzip'ed, 0640 root:$(id -gn "$TEST_USER"), readable while written"

go
wait_job_ok 180
# The job ended: its series vanish from the exposition.
t0=$EPOCHREALTIME
while curl -fsS "http://127.0.0.1:$PORT/metrics" | grep -q "job=\"$JOB_ID\""; do
	elapsed_since "$t0" 10 && fail "job $JOB_ID's series still exposed 10 s after it ended"
	sleep 0.2
done
wait_daemon_line "job $JOB_ID ended" 10 || fail "the daemon did not end the job's session within 10 s: $(cat "$DAEMON_ERR")"
log "the job's series vanished $(seconds_since "$t0")s after it ended; the daemon goes on"
pid_running "$DAEMON_PID" || fail "the daemon exited with the job"

log "checking Prometheus's stored series against the ground truth"
"$PY" "$IT_DIR/check_prom_truth.py" --prom "$PROM_URL" --job "$JOB_ID" --user "$TEST_USER" \
	--ranks "$NP" --log-dir "$LOGS" || fail "Prometheus's series differ from the ground truth (above)"
[ "$(prom_value 'up')" = 1 ] || fail "Prometheus's target is not up"

stop_server "$PROM_PID" prometheus
stop_daemon
wait_no_bpf_leftovers 10
[ ! -e "$TEXTFILE/memattr.prom" ] || fail "memattr.prom left behind after the daemon stopped"
# The finished spool: whole gzip streams, summary and run info.
for r in $(seq 0 $((NP - 1))); do
	gzip -t "$JOBDIR/rank-$r.csv.gz" || fail "rank-$r.csv.gz is not a complete gzip file after the job ended"
done
[ -s "$JOBDIR/summary.csv" ] && [ -s "$JOBDIR/run_info.csv" ] || fail "no summary.csv/run_info.csv in $JOBDIR"
pass
