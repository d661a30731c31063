#!/bin/bash
# Two memattr-bpf instances at once, on two jobs of the same node: jobs A
# and B (2 ranks each, mpi_phases of different sizes and lengths, told apart
# only by -x SLURM_JOB_ID), one tool attached to each by --job. Each tool
# must write its own job's ranks and nothing of the other's (every pid in its
# CSVs is one of its job's ranks), with exact figures through every phase
# (check_csv.py --phase-dir); A's tool detaching when job A ends must not
# disturb B's tool, which keeps tracing B to its end; nothing is left
# attached afterwards and both jobs exit 0.
source "$(dirname "$0")/lib.sh"

NP=2
A_MALLOC=8 A_MMAP=4
B_MALLOC=20 B_MMAP=10 B_ALLOC_MEM=4
A_ID=$((700000 + RANDOM * 32 + RANDOM % 32))
B_ID=$((A_ID + 1 + RANDOM % 1000))

it_setup
for j in a b; do
	install -d -o "$TEST_USER" -g "$(id -g "$TEST_USER")" "$LOGS/$j"
done
declare -A JOBPID MPIRUN RANKS TOOL TERR TSTART TLINE SAMPLER

JOB_OUT=$TMPD/job-a.out
start_job "$NP" -x "SLURM_JOB_ID=$A_ID" -- "$TMPD/bin/mpi_phases" --log-dir "$LOGS/a" \
	--go-file "$LOGS/a/go" --malloc-mib "$A_MALLOC" --mmap-mib "$A_MMAP" --plateau-ms 800
wait_ranks "$NP" 30
JOBPID[a]=$JOB_PID MPIRUN[a]=$MPIRUN_PID RANKS[a]="${RANK_PID[0]} ${RANK_PID[1]}"
wait_events a/phases ready "$NP" 30

JOB_OUT=$TMPD/job-b.out
start_job "$NP" -x "SLURM_JOB_ID=$B_ID" -- "$TMPD/bin/mpi_phases" --log-dir "$LOGS/b" \
	--go-file "$LOGS/b/go" --malloc-mib "$B_MALLOC" --mmap-mib "$B_MMAP" \
	--alloc-mem-mib "$B_ALLOC_MEM" --plateau-ms 1000
wait_ranks "$NP" 30
JOBPID[b]=$JOB_PID MPIRUN[b]=$MPIRUN_PID RANKS[b]="${RANK_PID[0]} ${RANK_PID[1]}"
wait_events b/phases ready "$NP" 30
log "job A $A_ID ranks ${RANKS[a]}; job B $B_ID ranks ${RANKS[b]}"

for j in a b; do
	id=$A_ID
	[ "$j" = b ] && id=$B_ID
	start_tool --job "$id" --output "$TMPD/out-$j"
	wait_tool_ready 30
	grep -q "^memattr-bpf: tracing $NP processes of job $id" "$TOOL_ERR" ||
		fail "tool $j: unexpected tracing line: $(head -1 "$TOOL_ERR")"
	TOOL[$j]=$TOOL_PID TERR[$j]=$TOOL_ERR TSTART[$j]=$TOOL_START TLINE[$j]=$T_LINE
done
for j in a b; do
	read -r p0 p1 <<<"${RANKS[$j]}"
	declare -gA RANK_PID=([0]=$p0 [1]=$p1)
	start_sampler "$TMPD/sampler-$j.csv"
	SAMPLER[$j]=$SAMPLER_PID
	SAMPLER_PID=""
done
TOOL_PID=${TOOL[a]} check_tool_holds_bpf
TOOL_PID=${TOOL[b]} check_tool_holds_bpf
touch "$LOGS/a/go" "$LOGS/b/go"
log "go (both jobs)"

use() {	# use JOB: point lib.sh's globals at job JOB and its tool
	JOB_PID=${JOBPID[$1]} MPIRUN_PID=${MPIRUN[$1]}
	TOOL_PID=${TOOL[$1]} TOOL_ERR=${TERR[$1]} TOOL_START=${TSTART[$1]}
	JOB_OUT=$TMPD/job-$1.out
}
use a
wait_job_ok 60
wait_tool_ok 15 "job A ended"
# B's tool and job go on, undisturbed by A's detach.
use b
pid_running "$JOB_PID" || fail "job B ended before job A: the test expects B to outlast A"
pid_running "$TOOL_PID" || fail "B's tool exited when A's tool detached; stderr: $(cat "$TOOL_ERR")"
check_tool_holds_bpf
wait_job_ok 60
wait_tool_ok 15 "job B ended"
for j in a b; do
	kill -TERM "${SAMPLER[$j]}" 2>/dev/null || true
	wait "${SAMPLER[$j]}" 2>/dev/null || true
done
check_no_bpf_leftovers

for j in a b; do
	log "tool $j's output"
	if [ "$j" = a ]; then
		sizes=(--malloc-mib "$A_MALLOC" --mmap-mib "$A_MMAP")
	else
		sizes=(--malloc-mib "$B_MALLOC" --mmap-mib "$B_MMAP" --alloc-mem-mib "$B_ALLOC_MEM")
	fi
	run_checker "$TMPD/out-$j" --ranks "$NP" --sampler "$TMPD/sampler-$j.csv" \
		--phase-dir "$LOGS/$j" "${sizes[@]}" --t-line "${TLINE[$j]}"
	# Only this job's ranks, in every file the tool wrote.
	seen=$(for f in "$TMPD/out-$j"/*.csv; do
		case $(basename "$f") in run_info.csv) continue ;; esac
		"$PY" -c 'import csv, sys
for row in csv.DictReader(open(sys.argv[1])):
    if "pid" in row: print(row["pid"])' "$f" || echo "unreadable:$f"
	done | sort -u | tr '\n' ' ')
	want=$(tr ' ' '\n' <<<"${RANKS[$j]}" | sort -u | tr '\n' ' ')
	log "tool $j: pids in its CSVs: $seen(its ranks: $want)"
	[ "$seen" = "$want" ] || fail "tool $j wrote pids $seen, its job's ranks are $want"
	ls "$TMPD/out-$j" | grep -q '^pid-' && fail "tool $j wrote pid-*.csv files: $(ls "$TMPD/out-$j")"
done
pass
