#!/bin/bash
# One dataset for a job that spans nodes. A real Slurm runs, as the test
# user, a batch job whose `srun --mpi=pmix -n4` step holds (R+1)*8 MiB per
# rank. This machine is one node, so two "nodes" are made the way a
# multi-node job makes them: on each node of a job, `srun --overlap ...
# memattr-bpf --output out/%n` runs with SLURMD_NODENAME set by Slurm; here
# two tools run as root with SLURMD_NODENAME=nodeA and nodeB, each tracing
# two of the ranks, started 1 s apart (two clocks to align). Then, as the
# test user, `memattr-bpf merge` must give ranks 0..3 with their node,
# time_s moved by the nodes' start difference, a recomputed summary equal to
# the nodes' own peaks, summed counters, and a report that shows both
# nodes; and merge must refuse what is not one job: the same node twice, a
# dataset of another job, a rank on two nodes, a bad row (found while
# writing: no half dataset left).
source "$(dirname "$0")/lib.sh"
source "$IT_DIR/slurm_lib.sh"

NP=4
MIB=8

it_setup
cp "$MEMATTR_BIN" "$TMPD/bin/memattr-bpf"
chmod 755 "$TMPD/bin/memattr-bpf"
slurm_start

slurm_hold_job "$NP" "srun --mpi=pmix -n $NP $TMPD/bin/mpi_hold --log-dir $LOGS --go-file $GO_FILE --stop-file $STOP_FILE --hold-mib $MIB --per-rank --hold-s 120"

# Each rank's pid, by the rank Open MPI gave it.
declare -A RANK_PID
for pid in $(pgrep -u "$TEST_USER" -f "$TMPD/bin/mpi_hold"); do
	r=$(tr '\0' '\n' <"/proc/$pid/environ" | sed -n 's/^PMIX_RANK=//p')
	[ -n "$r" ] && RANK_PID[$r]=$pid
done
[ "${#RANK_PID[@]}" -eq "$NP" ] || fail "found ${#RANK_PID[@]} ranks of job $JOB, expected $NP"

OUT=$TMPD/out
install -d -o "$TEST_USER" -g "$(id -g "$TEST_USER")" "$OUT"
# "%n" is what a site's srun line uses; the two tools are the two nodes.
SLURMD_NODENAME=nodeA SLURM_JOB_ID=$JOB start_tool --pid "${RANK_PID[0]},${RANK_PID[1]}" --output "$OUT/%n"
wait_tool_ready 30
PID_A=$TOOL_PID
ERR_A=$TOOL_ERR
sleep 1
SLURMD_NODENAME=nodeB SLURM_JOB_ID=$JOB start_tool --pid "${RANK_PID[2]},${RANK_PID[3]}" --output "$OUT/%n"
wait_tool_ready 30
go
sleep 1.5
touch "$STOP_FILE"
wait_tool_ok 60 "the ranks ended (nodeB)"
TOOL_PID=$PID_A
TOOL_ERR=$ERR_A
wait_tool_ok 60 "the ranks ended (nodeA)"
check_no_bpf_leftovers
chown -R "$TEST_USER" "$OUT"	# as sudo would have handed them over

log "merging as $TEST_USER"
as_user "$TMPD/bin/memattr-bpf" merge "$OUT/nodeA" "$OUT/nodeB" -o "$OUT/job" >"$TMPD/merge.out" 2>&1 ||
	fail "merge failed: $(cat "$TMPD/merge.out")"
as_user "$TMPD/bin/memattr-bpf" report "$OUT/job" >/dev/null 2>"$TMPD/report.err" ||
	fail "report of the merged dataset failed: $(cat "$TMPD/report.err")"

"$PY" - "$OUT" "$OUT/job" "$NP" "$MIB" "$JOB" <<'PY' || fail "the merged dataset is not right (above)"
import csv, os, sys
out, job, np, mib, jobid = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
bad = 0
def err(msg):
    global bad
    print("FAIL:", msg)
    bad += 1
def info(d):
    return {r["key"]: r["value"] for r in csv.DictReader(open(os.path.join(d, "run_info.csv")))}
ia, ib, im = info(f"{out}/nodeA"), info(f"{out}/nodeB"), info(job)
offset = float(ib["start_time_unix_s"]) - float(ia["start_time_unix_s"])
if not 0.9 < offset < 5:
    err(f"nodeB started {offset:.3f} s after nodeA, the test started it 1 s later")
if im["job"] != jobid or im["nodes"] != "2" or float(im["start_time_unix_s"]) != float(ia["start_time_unix_s"]):
    err(f"merged run_info: job {im['job']} nodes {im['nodes']} start {im['start_time_unix_s']}")
if int(im["events"]) != int(ia["events"]) + int(ib["events"]):
    err(f"events {im['events']} is not {ia['events']} + {ib['events']}")
nodes = {r["node"]: r for r in csv.DictReader(open(os.path.join(job, "nodes.csv")))}
if sorted(nodes) != ["nodeA", "nodeB"] or abs(float(nodes["nodeB"]["clock_offset_s"]) - offset) > 1e-5:
    err(f"nodes.csv: {nodes}")
for r in range(np):
    node = "nodeA" if r < 2 else "nodeB"
    shift = 0.0 if r < 2 else offset
    src = list(csv.DictReader(open(f"{out}/{node}/rank-{r}.csv")))
    dst = list(csv.DictReader(open(f"{job}/rank-{r}.csv")))
    if len(src) != len(dst):
        err(f"rank {r}: {len(dst)} rows merged, the node wrote {len(src)}")
        continue
    for s, d in zip(src, dst):
        if d["node"] != node or d["rss_bytes"] != s["rss_bytes"] or abs(float(d["time_s"]) - float(s["time_s"]) - shift) > 0.0015:
            err(f"rank {r}: row {s} became {d}")
            break
    app = max(int(x["rss_bytes"]) for x in dst if x["component"] == "app")
    if abs(app / 2**20 - (r + 1) * mib) > 0.05 * (r + 1) * mib + 0.5:
        err(f"rank {r}: app peak {app / 2**20:.2f} MiB, it holds {(r + 1) * mib}")
# The recomputed summary: each node's own peak, on the job's clock.
for node, shift in (("nodeA", 0.0), ("nodeB", offset)):
    own = {(x["rank"], x["component"]): x for x in csv.DictReader(open(f"{out}/{node}/summary.csv"))}
    merged = {(x["rank"], x["component"]): x for x in csv.DictReader(open(f"{job}/summary.csv")) if x["node"] == node}
    for key, x in own.items():
        m = merged.get(key)
        if not m or m["peak_rss_bytes"] != x["peak_rss_bytes"] or abs(float(m["peak_rss_time_s"]) - float(x["peak_rss_time_s"]) - shift) > 0.0015:
            err(f"{node} {key}: tracer's summary {x}, merged {m}")
            break
page = open(f"{job}/report.html").read()
for node in ("nodeA", "nodeB"):
    if page.count(node) < 2:
        err(f"the report does not show node {node}")
print(f"merged 2 nodes, offset {offset:.3f} s, {im['events']} events")
sys.exit(1 if bad else 0)
PY

log "merge refuses what is not one job"
refuse() {	# expected-message merge-args...
	local want=$1
	shift
	if as_user "$TMPD/bin/memattr-bpf" merge "$@" -o "$OUT/refused" >"$TMPD/refuse.out" 2>&1; then
		fail "merge $* succeeded: $(cat "$TMPD/refuse.out")"
	fi
	grep -q "$want" "$TMPD/refuse.out" || fail "merge $*: expected '$want', got: $(cat "$TMPD/refuse.out")"
	[ ! -e "$OUT/refused" ] || fail "merge $* left $OUT/refused"
	[ -z "$(ls -d "$OUT"/refused.merging-* 2>/dev/null)" ] || fail "merge $* left a temporary directory"
}
refuse "both node nodeA" "$OUT/nodeA" "$OUT/nodeA"
cp -a "$OUT/nodeB" "$OUT/other"
sed -i "s/^job,.*/job,999999/; s/^hostname,.*/hostname,nodeC/" "$OUT/other/run_info.csv"
refuse "different jobs" "$OUT/nodeA" "$OUT/other"
cp -a "$OUT/nodeA" "$OUT/clash"
sed -i "s/^hostname,.*/hostname,nodeC/" "$OUT/clash/run_info.csv"
refuse "rank 0 is in both" "$OUT/nodeA" "$OUT/nodeB" "$OUT/clash"
cp -a "$OUT/nodeB" "$OUT/cut"
sed -i "s/^hostname,.*/hostname,nodeD/" "$OUT/cut/run_info.csv"
echo "1.0,2,99,app,notanumber,0" >>"$OUT/cut/rank-2.csv"
chown -R "$TEST_USER" "$OUT"
refuse "cut/rank-2.csv:[0-9]*: bad value" "$OUT/nodeA" "$OUT/cut"
pass
