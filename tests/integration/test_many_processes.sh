#!/bin/bash
# Bounded by what is alive: one job whose 2 ranks start and end 5,000
# short-lived processes (fork, exec of /bin/sleep, exit ~0.3 s later) over
# about a minute, traced by --job from before the first one. Every child
# must be seen (run_info.csv counts exactly the ranks and their children as
# traced, none twice, none refused, no event dropped), and the tool's RSS
# once it has caught up with the job must be within 2 MiB of its RSS after
# the first 500: exited processes are freed, not kept. (Children sampled
# during their short life also get their own pid-<P>.csv: how many is
# reported, not judged -- on a busy machine a sample may come late.)
source "$(dirname "$0")/lib.sh"

NP=2
PER_RANK=${PER_RANK:-2500}
SECONDS_SPREAD=${SECONDS_SPREAD:-55}
FIRST=500
RSS_SLACK_KB=2048
JOB_ID=$((900000 + RANDOM * 32 + RANDOM % 32))

# VmRSS of the tool, kB.
tool_rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$TOOL_PID/status"; }
pid_files() { find "$OUT" -maxdepth 1 -name 'pid-*.csv' | wc -l; }

it_setup
start_job "$NP" -x "SLURM_JOB_ID=$JOB_ID" -- "$TMPD/bin/mpi_churn" --log-dir "$LOGS" \
	--go-file "$GO_FILE" --stop-file "$STOP_FILE" --count "$PER_RANK" \
	--seconds "$SECONDS_SPREAD" --child-ms 300
wait_ranks "$NP" 30
wait_events churn ready "$NP" 30

OUT=$TMPD/out
start_tool --job "$JOB_ID" --output "$OUT"
wait_tool_ready 30
go

# Seen: with its own file already, or counted in run_info.csv (every 5 s).
traced() {
	local n
	n=$(sed -n 's/^processes_traced,//p' "$OUT/run_info.csv" 2>/dev/null)
	echo "${n:-0}"
}
t0=$EPOCHREALTIME
while [ "$(pid_files)" -lt "$FIRST" ] && [ "$(traced)" -lt $((NP + FIRST)) ]; do
	pid_running "$TOOL_PID" || fail "tool exited early; stderr: $(cat "$TOOL_ERR")"
	elapsed_since "$t0" 60 && fail "fewer than $FIRST processes seen after 60 s: $(pid_files)"
	sleep 0.1
done
RSS_FIRST=$(tool_rss_kb)
log "after $FIRST processes: tool VmRSS $RSS_FIRST kB"

wait_events churn done "$NP" $((SECONDS_SPREAD + 90))
# The tool has caught up once run_info.csv (rewritten every 5 s) counts
# every process: their forks, and so the exits before them, are handled.
EXPECTED=$((NP + NP * PER_RANK))
t0=$EPOCHREALTIME
until [ "$(traced)" = "$EXPECTED" ]; do
	elapsed_since "$t0" 60 && fail "run_info.csv: processes_traced is $(traced), expected $EXPECTED, 60 s after the job's last child"
	sleep 0.2
done
sleep 1		# the last children's exits
RSS_END=$(tool_rss_kb)
log "after $((NP * PER_RANK)) processes: tool VmRSS $RSS_END kB (grew $((RSS_END - RSS_FIRST)) kB)"
touch "$STOP_FILE"
wait_job_ok 60
wait_tool_ok 15 "the job ended"
check_no_bpf_leftovers

[ $((RSS_END - RSS_FIRST)) -le "$RSS_SLACK_KB" ] ||
	fail "tool RSS grew $((RSS_END - RSS_FIRST)) kB from the first $FIRST processes to the end (limit $RSS_SLACK_KB kB)"

info() { sed -n "s/^$1,//p" "$OUT/run_info.csv"; }
assert_eq "$(info processes_refused)" 0 "processes refused"
assert_eq "$(info dropped_events)" 0 "events dropped"
assert_eq "$(info processes_traced)" "$EXPECTED" "processes traced (ranks and children, each once)"
children=$(cat "$LOGS"/churn-rank-*.csv | grep -c '^child,')
assert_eq "$children" $((NP * PER_RANK)) "children the ranks logged"
with_file=0
for r in $(seq 0 $((NP - 1))); do
	for pid in $(awk -F, '$1 == "child" { print $5 }' "$LOGS/churn-rank-$r.csv"); do
		[ -s "$OUT/pid-$pid.csv" ] && with_file=$((with_file + 1))
	done
done
run_checker "$OUT" --ranks "$NP"
log "$children children, $EXPECTED processes traced, none refused; $with_file children sampled in their life (own pid-<P>.csv); tool RSS $RSS_FIRST -> $RSS_END kB"
pass
