#!/bin/bash
# --job <Slurm job ID> finds a running batch job's processes through Slurm's
# own record, its cgroup. A real Slurm (slurm_lib.sh) runs, as the test
# user, an sbatch script whose mpirun starts 4 ranks of mpi_hold with an
# emptied environment (env -i): no SLURM_JOB_ID reaches them, and under
# mpirun inside a batch script SLURM_PROCID would be 0 for every rank anyway,
# so only the job's cgroup (cgroup v1 here: .../slurm_node1/uid_U/job_J/
# step_batch) ties them to the job, and only Open MPI's own variables give
# their ranks. The tool, as root, attached after the ranks started, must
# trace all 4 with ranks 0..3 and each rank's (R+1)*8 MiB in app; the step
# selection must hold: "J.batch" finds the job, "J.0" (a step the job does
# not have) finds nothing and says so. With SLURM_PROCTRACK=linuxproc
# (test_slurm_attach_linuxproc) Slurm tracks the job without cgroups and
# only `scontrol listpids` knows the ranks.
source "$(dirname "$0")/lib.sh"
source "$IT_DIR/slurm_lib.sh"

NP=4
MIB=8

it_setup
slurm_start

slurm_hold_job "$NP" "exec env -i --ignore-signal=PIPE PATH=/usr/bin:/bin HOME=\$HOME mpirun --oversubscribe -np $NP $TMPD/bin/mpi_hold --log-dir $LOGS --go-file $GO_FILE --stop-file $STOP_FILE --hold-mib $MIB --per-rank --hold-s 120"
for f in "$LOGS"/hold-rank-*.csv; do
	pid=$(awk -F, '$1 == "ready" { print $4 }' "$f")
	grep -q '^SLURM_JOB_ID=' <(tr '\0' '\n' <"/proc/$pid/environ") &&
		fail "rank pid $pid carries SLURM_JOB_ID: the test would not prove the cgroup path"
	if [ "$SLURM_PROCTRACK" = linuxproc ]; then
		! grep -q "job_$JOB" "/proc/$pid/cgroup" ||
			fail "rank pid $pid is in a cgroup of job $JOB: the test would not prove scontrol listpids"
	else
		grep -q "job_$JOB/step_batch" "/proc/$pid/cgroup" ||
			fail "rank pid $pid is not in job $JOB's batch step cgroup: $(cat "/proc/$pid/cgroup")"
	fi
done
if [ "$SLURM_PROCTRACK" = linuxproc ]; then
	log "4 ranks in no cgroup of job $JOB, none with SLURM_JOB_ID: only scontrol listpids knows them"
else
	log "4 ranks in job_$JOB/step_batch, none with SLURM_JOB_ID in its environment"
fi

# A step the job does not have: nothing, and a clear line.
if "$MEMATTR_BIN" --job "$JOB.0" --duration 1 --output "$TMPD/out.step0" 2>"$TMPD/step0.err"; then
	fail "--job $JOB.0 traced something: $(cat "$TMPD/step0.err")"
fi
grep -q "no process of job '$JOB.0'" "$TMPD/step0.err" ||
	fail "--job $JOB.0: unexpected error: $(cat "$TMPD/step0.err")"
[ ! -e "$TMPD/out.step0" ] || fail "--job $JOB.0 left an output directory"

OUT=$TMPD/out
start_tool --job "$JOB.batch" --output "$OUT"
wait_tool_ready 30
grep -q "tracing [0-9]* processes of job $JOB.batch" "$TOOL_ERR" ||
	fail "unexpected tracing line: $(grep tracing "$TOOL_ERR")"
go
sleep 1.5
touch "$STOP_FILE"
wait_tool_ok 60 "the job ended"
t0=$EPOCHREALTIME
while squeue -h -j "$JOB" 2>/dev/null | grep -q .; do
	elapsed_since "$t0" 30 && fail "job $JOB still in the queue 30 s after its ranks ended"
	sleep 0.2
done
check_no_bpf_leftovers

log "checking ranks and their memory"
"$PY" - "$OUT" "$NP" "$MIB" <<'PY' || fail "the batch job's ranks are not right (above)"
import csv, os, sys
out, np, mib = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
bad = 0
for r in range(np):
    f = f"{out}/rank-{r}.csv"
    if not os.path.exists(f):
        print(f"FAIL: no {f}: files are {sorted(os.listdir(out))}"); bad += 1; continue
    app = [int(x["rss_bytes"]) for x in csv.DictReader(open(f)) if x["component"] == "app"]
    peak = max(app) / 2**20 if app else 0
    want = (r + 1) * mib
    ok = abs(peak - want) <= 0.05 * want + 0.5
    print(f"{'ok' if ok else 'FAIL'} rank {r}: app peak {peak:.2f} MiB, the rank holds {want} MiB")
    bad += not ok
sys.exit(1 if bad else 0)
PY
pass
