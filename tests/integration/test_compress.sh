#!/bin/bash
# --compress on the per-job command: rank timelines as rank-<R>.csv.gz,
# readable with zcat while the job runs, whole gzip files at the end, owned
# as the plain ones are (SUDO_UID's, 0640). Decompressed, they meet the same
# CSV contract and ground-truth checks as plain ones, and `report` reads the
# compressed directory as it is.
source "$(dirname "$0")/lib.sh"

NP=2
MALLOC_MIB=16
MMAP_MIB=8
ALLOC_MEM_MIB=4

it_setup
uid=$(id -u "$TEST_USER")
OUT=$TMPD/out
set_sudo_env
TOOL_ERR=$TMPD/tool.err
log "starting: memattr-bpf --compress --output $OUT -- mpirun ..."
TOOL_START=$EPOCHREALTIME
no_sigpipe "${SUDO_ENV[@]}" "$MEMATTR_BIN" --compress --quiet --output "$OUT" -- mpirun --oversubscribe -np "$NP" \
	"$TMPD/bin/mpi_phases" --log-dir "$LOGS" --go-file "$GO_FILE" \
	--malloc-mib "$MALLOC_MIB" --mmap-mib "$MMAP_MIB" --alloc-mem-mib "$ALLOC_MEM_MIB" --plateau-ms 800 \
	>"$TMPD/tool.out" 2>"$TOOL_ERR" &
TOOL_PID=$!
track_pid "$TOOL_PID"
JOB_OUT=$TMPD/tool.out
wait_tool_ready 30
MPIRUN_PID=$(find_descendant "$TOOL_PID" mpirun 15) || fail "no mpirun below the tool: $(cat "$TOOL_ERR")"
track_pid "$MPIRUN_PID"
wait_ranks "$NP" 30
wait_events phases ready "$NP" 30
start_sampler "$TMPD/sampler.csv"
sleep 0.5
rows=$(zcat "$OUT/rank-0.csv.gz" 2>/dev/null | grep -c ',total,' || true)
[ "$rows" -gt 0 ] || fail "zcat reads no rows of rank-0.csv.gz while it is written"
log "zcat reads $rows samples of rank-0.csv.gz while it is written"
go
wait_tool_ok 90 "the launched job ended"
stop_sampler
check_no_bpf_leftovers
PLAIN=$TMPD/plain
mkdir -m 750 "$PLAIN"
for r in $(seq 0 $((NP - 1))); do
	f=$OUT/rank-$r.csv.gz
	[ ! -e "$OUT/rank-$r.csv" ] || fail "rank-$r.csv written beside rank-$r.csv.gz"
	gzip -t "$f" || fail "$f is not a whole gzip file"
	[ "$(stat -c '%a %u' "$f")" = "640 $uid" ] || fail "$f: $(stat -c '%a %u' "$f"), expected 640 $uid"
	zcat "$f" >"$PLAIN/rank-$r.csv"
done
cp -p "$OUT/summary.csv" "$OUT/run_info.csv" "$PLAIN/"
chown -R "$uid" "$PLAIN"
chmod 640 "$PLAIN"/*.csv
run_checker "$PLAIN" --ranks "$NP" --sampler "$TMPD/sampler.csv" --phase-dir "$LOGS" \
	--malloc-mib "$MALLOC_MIB" --mmap-mib "$MMAP_MIB" --alloc-mem-mib "$ALLOC_MEM_MIB" \
	--t-line "$T_LINE"
"$MEMATTR_BIN" report "$OUT" >/dev/null || fail "report cannot read the compressed output"
[ -s "$OUT/report.html" ] || fail "no report.html"
pass
