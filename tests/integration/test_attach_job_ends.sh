#!/bin/bash
# A job that ends right after a late attach (--job <mpirun pid>), before
# the tool's first sample round: every rank's CSV must still exist, with
# the sample the attach read took (the memory each rank held then). The
# validation's LULESH on 8 ranks (2 cores, both MPIs) met this: the attach
# took 4.4 s, the job ended within 0.2 s of it, and no rank had a CSV.
# Here the tool is held between its attach and its first round by its
# --ready-fd, a pipe already full (held_ready.py), while the job ends; the
# interval is 1 s, so no round could come first anyway. Then the same with
# the tool stopped (SIGINT) before its first round, the job still running:
# the attach sample, then the last one.
source "$(dirname "$0")/lib.sh"

NP=4
HOLD_MIB=8	# rank R holds (R+1) * 8 MiB (--per-rank)

# held_tool OUT: the tool attached to the job, held before its first round.
held_tool() {
	local out=$1
	rm -f "$TMPD/release" "$TMPD/tool.pid"
	TOOL_ERR=$TMPD/tool.err.$RANDOM
	TOOL_START=$EPOCHREALTIME
	log "starting: memattr-bpf --job $MPIRUN_PID --output $out --interval 1000 --ready-fd 3 (a full pipe)"
	"$PY" "$IT_DIR/held_ready.py" --release "$TMPD/release" --pid-file "$TMPD/tool.pid" -- \
		env --default-signal=INT "$MEMATTR_BIN" --job "$MPIRUN_PID" --output "$out" \
		--interval 1000 --ready-fd 3 >"$TMPD/tool.out" 2>"$TOOL_ERR" &
	TOOL_PID=$!
	track_pid "$TOOL_PID"
	wait_tool_ready 60
	[ -s "$TMPD/tool.pid" ] || fail "held_ready.py gave no pid"
	TOOL_REAL_PID=$(cat "$TMPD/tool.pid")
	track_pid "$TOOL_REAL_PID"
	sleep 0.3
	pid_running "$TOOL_REAL_PID" || fail "the tool did not wait at its --ready-fd"
	[ -z "$(ls "$out"/rank-*.csv 2>/dev/null)" ] || fail "rows before the first round: $(ls "$out")"
}

# check_ranks OUT MIN_SAMPLES: each rank's file, with a sample of at least the memory it held.
check_ranks() {
	local out=$1 min=$2
	"$PY" - "$out" "$NP" "$HOLD_MIB" "$min" <<'EOP' || fail "rank CSVs of $1 (above)"
import csv, os, sys
out, np, hold, least = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
bad = 0
for r in range(np):
    path = os.path.join(out, "rank-%d.csv" % r)
    if not os.path.exists(path):
        print("rank %d: no %s (files: %s)" % (r, path, sorted(os.listdir(out))))
        bad += 1
        continue
    totals = [int(row["rss_bytes"]) for row in csv.DictReader(open(path)) if row["component"] == "total"]
    held = (r + 1) * hold << 20
    print("rank %d: %d sample(s), total %s MiB (it held %d MiB)"
          % (r, len(totals), ", ".join("%.1f" % (t / 2**20) for t in totals), held >> 20))
    if len(totals) < least or not totals or max(totals) < held:
        bad += 1
sys.exit(1 if bad else 0)
EOP
}

# hold_job: the ranks hold their memory until the stop file.
hold_job() {
	rm -f "$STOP_FILE" "$GO_FILE" "$LOGS"/hold-rank-*.csv
	start_job "$NP" -- "$TMPD/bin/mpi_hold" --log-dir "$LOGS" --hold-mib "$HOLD_MIB" --per-rank \
		--hold-s 120 --tick-ms 20 --stop-file "$STOP_FILE" --go-file "$GO_FILE"
	wait_ranks "$NP" 30
	go
	wait_events hold hold_begin "$NP" 30
}

it_setup

# 1. The job ends while the tool waits before its first round.
hold_job
OUT=$TMPD/out
held_tool "$OUT"
touch "$STOP_FILE"
wait_job_ok 30
log "the job ended; the tool is let go"
touch "$TMPD/release"
wait_tool_ok 30 "the job ended"
check_ranks "$OUT" 1
[ -s "$OUT/summary.csv" ] && [ "$(grep -c ',total,' "$OUT/summary.csv")" -eq "$NP" ] ||
	fail "summary.csv lacks a rank: $(cat "$OUT/summary.csv")"
check_no_bpf_leftovers

# 2. The tool stopped (SIGINT) before its first round; the job runs on.
hold_job
OUT2=$TMPD/out2
held_tool "$OUT2"
kill -INT "$TOOL_REAL_PID"
wait_tool_ok 30 "SIGINT"
check_ranks "$OUT2" 2
touch "$STOP_FILE"
wait_job_ok 30
check_no_bpf_leftovers
pass
