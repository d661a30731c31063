#!/bin/bash
# The node service under a real Prometheus: `memattr-bpf daemon` runs, a
# 4-rank mpi_truth job of the test user starts after it (no attach step:
# its ranks are seen at exec), Debian's Prometheus scrapes the daemon every
# second, and the per-rank, per-component series it stored must match the
# workload's ground truth plateau by plateau (5%). Before that, the
# series per job as the config file sets them, switched by SIGHUP: the
# default page (metrics-detail = job) has no rank label and the user on
# memattr_job_info alone; metrics-detail = rank with metrics-max-ranks = 2
# keeps 2 of the 4 ranks, the others summed under rank="other" and counted
# in memattr_job_ranks_folded; then rank with the default cap, all 4 ranks,
# for the ground truth. Also: promtool accepts
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
URL=http://127.0.0.1:$PORT/metrics
TEST_UID=$(id -u "$TEST_USER")
# Series per job come from the file alone (the command line would win over it).
CONF=$TMPD/memattr-bpf.conf
echo "# the default: metrics-detail = job" >"$CONF"
start_daemon --config "$CONF" --spool "$SPOOL" --listen "127.0.0.1:$PORT" --textfile "$TEXTFILE" \
	--interval 100 --pss-interval 1000
check_tool_holds_bpf() { "$PY" "$IT_DIR/bpf_leftovers.py" --held-by "$DAEMON_PID" || fail "the daemon holds no BPF program named ma_*"; }
check_tool_holds_bpf
start_prometheus "127.0.0.1:$PORT"

start_job "$NP" -x "SLURM_JOB_ID=$JOB_ID" -- "$TMPD/bin/mpi_truth" --log-dir "$LOGS" \
	--go-file "$GO_FILE" --unit-mib 4 --plateau-ms 3000
wait_ranks "$NP" 30
wait_events truth ready "$NP" 30

# The default page: per-job series, no rank label, the user on the info series only.
t0=$EPOCHREALTIME
until curl -fsS "$URL" >"$TMPD/job_mode.txt" &&
	grep -q "^memattr_job_resident_bytes{job=\"$JOB_ID\",uid=\"$TEST_UID\",component=\"total\"} " "$TMPD/job_mode.txt"; do
	elapsed_since "$t0" 20 && fail "job $JOB_ID not on the page after 20 s; daemon: $(cat "$DAEMON_ERR")"
	sleep 0.2
done
! grep -q 'rank="' "$TMPD/job_mode.txt" || fail "the default page has rank labels: $(grep -m3 'rank="' "$TMPD/job_mode.txt")"
! grep -q '^memattr_rank_' "$TMPD/job_mode.txt" || fail "the default page has memattr_rank_* series"
grep -q "^memattr_job_info{job=\"$JOB_ID\",uid=\"$TEST_UID\",user=\"$TEST_USER\"} 1$" "$TMPD/job_mode.txt" ||
	fail "no memattr_job_info of the job: $(grep '^memattr_job_info' "$TMPD/job_mode.txt")"
[ "$(grep -v '^memattr_job_info{' "$TMPD/job_mode.txt" | grep -c 'user=' || true)" -eq 0 ] ||
	fail "a series other than memattr_job_info carries user: $(grep -v '^memattr_job_info{' "$TMPD/job_mode.txt" | grep -m3 'user=')"
grep -q "^memattr_job_rank_peak_resident_bytes{job=\"$JOB_ID\",uid=\"$TEST_UID\"} [1-9]" "$TMPD/job_mode.txt" ||
	fail "no memattr_job_rank_peak_resident_bytes of the job"
JOB_SERIES=$(grep -c "job=\"$JOB_ID\"" "$TMPD/job_mode.txt")
log "default page: $JOB_SERIES series of the job, none per rank, the user on memattr_job_info only"

# rank mode capped at 2 (SIGHUP): 2 ranks of their own, the other 2 summed in rank="other".
printf 'metrics-detail = rank\nmetrics-max-ranks = 2\n' >"$CONF"
kill -HUP "$DAEMON_PID"
t0=$EPOCHREALTIME
until curl -fsS "$URL" >"$TMPD/capped.txt" &&
	grep -q "^memattr_job_ranks_folded{job=\"$JOB_ID\",uid=\"$TEST_UID\"} 2$" "$TMPD/capped.txt"; do
	elapsed_since "$t0" 10 && fail "no memattr_job_ranks_folded 2 after SIGHUP: $(grep ranks_folded "$TMPD/capped.txt"); daemon: $(tail -3 "$DAEMON_ERR")"
	sleep 0.2
done
"$PY" - "$TMPD/capped.txt" "$JOB_ID" <<'EOPY' || fail "rank mode capped at 2: wrong series (above)"
import re, sys
page, job = open(sys.argv[1]).read(), sys.argv[2]
tot = {m[0]: int(m[1]) for m in re.findall(
    r'^memattr_rank_resident_bytes\{job="%s",uid="\d+",step="",rank="([^"]+)",component="total"\} (\d+)$' % job, page, re.M)}
job_tot = int(re.search(r'^memattr_job_resident_bytes\{job="%s",uid="\d+",component="total"\} (\d+)$' % job, page, re.M)[1])
ranks = sorted(r for r in tot if r != "other")
print(f"capped: rank series {ranks} + other; rank totals sum {sum(tot.values())}, job total {job_tot}")
# One render: the groups add up to the job exactly.
ok = len(ranks) == 2 and "other" in tot and sum(tot.values()) == job_tot
ok = ok and all(tot[r] > 0 for r in ranks)
sys.exit(0 if ok else 1)
EOPY
log "metrics-max-ranks = 2: 2 ranks kept, 2 folded into rank=\"other\" (memattr_job_ranks_folded 2), sums equal the job's"

# rank mode, default cap: every rank, for the ground truth below.
echo 'metrics-detail = rank' >"$CONF"
kill -HUP "$DAEMON_PID"
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
grep -q "^memattr_rank_resident_bytes{job=\"$JOB_ID\",uid=\"$TEST_UID\",step=\"\",rank=\"0\",component=\"total\"} " \
	"$TMPD/exposition.txt" || fail "no rank 0 total series labelled job/uid/step/rank/component"
grep -q "^memattr_job_ranks_folded{job=\"$JOB_ID\",uid=\"$TEST_UID\"} 0$" "$TMPD/exposition.txt" ||
	fail "ranks folded under the default cap: $(grep ranks_folded "$TMPD/exposition.txt")"

# node_exporter's textfile collector serves --textfile's memattr.prom.
NE_PORT=$(free_port)
prometheus-node-exporter --web.listen-address="127.0.0.1:$NE_PORT" --collector.disable-defaults \
	--collector.textfile --collector.textfile.directory="$TEXTFILE" >"$TMPD/node_exporter.log" 2>&1 &
NE_PID=$!
track_pid "$NE_PID"
wait_http "http://127.0.0.1:$NE_PORT/metrics" 20
curl -fsS "http://127.0.0.1:$NE_PORT/metrics" >"$TMPD/node_exporter.txt"
grep -q "^memattr_rank_resident_bytes{component=\"total\",job=\"$JOB_ID\",rank=\"0\",step=\"\",uid=\"$TEST_UID\"} " \
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
