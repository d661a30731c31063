#!/bin/bash
# A compressed soak of the node service: SOAK_JOBS short jobs (default 400;
# SOAK_JOBS=1000 for the issue's thousand) of the test user, 16 at a time,
# each one process carrying its own SLURM_JOB_ID and living 2 s (a process
# that ends before its first sample leaves no timeline), while
# the daemon runs with --retain 1. Every job must be found at its exec,
# get its own spool directory with whole gzip files, and end; the daemon's
# anonymous memory and descriptor count must stay flat (end against after the first
# tenth), and so must the address spaces the kernel side follows; a job
# directory older than the retention is removed at start.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"

N=${SOAK_JOBS:-400}
PAR=16
command -v setpriv >/dev/null || fail "setpriv not installed (util-linux)"
it_setup
SPOOL=$TMPD/spool
mkdir -m 755 "$SPOOL"
mkdir -m 750 "$SPOOL/stale-job"
touch -d '5 days ago' "$SPOOL/stale-job"
PORT=$(free_port)
URL=http://127.0.0.1:$PORT/metrics
TAG=soak$$x$RANDOM
uid=$(id -u "$TEST_USER") gid=$(id -g "$TEST_USER")

start_daemon --spool "$SPOOL" --listen "127.0.0.1:$PORT" --interval 100 --retain 1
t0=$EPOCHREALTIME
while [ -e "$SPOOL/stale-job" ]; do
	elapsed_since "$t0" 10 && fail "a 5-day-old job directory survived --retain 1"
	sleep 0.1
done
log "--retain 1 removed a 5-day-old job directory at start"

fds() { ls "/proc/$DAEMON_PID/fd" | wc -l; }
# Anonymous memory only: VmRSS also counts the ring buffer's pages as the
# daemon first reads through them (up to 16 MiB), which is not growth.
rss() { awk '/^RssAnon:/ { print $2 }' "/proc/$DAEMON_PID/status"; }
traced_now() { curl -fsS "$URL" | awk '/^memattr_(jobs|processes) / { printf "%s=%s ", $1, $2 }'; }
run_job() {	# I: one process of the test user, job $TAG-I
	setpriv --reuid="$uid" --regid="$gid" --clear-groups \
		env -i PATH=/usr/bin:/bin "SLURM_JOB_ID=$TAG-$1" /bin/sleep 2
}

t_start=$EPOCHREALTIME
batch=()
for i in $(seq 1 "$N"); do
	run_job "$i" &
	batch+=($!)
	# Not a bare wait: that would wait for the daemon too.
	if [ ${#batch[@]} -eq "$PAR" ]; then
		wait "${batch[@]}"
		batch=()
	fi
	if [ "$i" -eq $((N / 10)) ]; then
		sleep 1
		RSS0=$(rss) FD0=$(fds)
		log "after $i jobs: daemon RssAnon $((RSS0 / 1024)) MiB, $FD0 descriptors ($(traced_now))"
	fi
done
[ ${#batch[@]} -eq 0 ] || wait "${batch[@]}"
secs=$(seconds_since "$t_start")
# Every session ends once its process has exited.
t0=$EPOCHREALTIME
while [ "$(grep -c "job $TAG-[0-9]* ended" "$DAEMON_ERR")" -lt "$N" ]; do
	elapsed_since "$t0" 20 && fail "only $(grep -c "job $TAG-[0-9]* ended" "$DAEMON_ERR") of $N jobs ended; started: $(grep -c "job $TAG-[0-9]* of" "$DAEMON_ERR"); $(curl -fsS "$URL" | grep -E '^memattr_(events_dropped|execs_examined)')"
	sleep 0.2
done
sleep 1
RSS1=$(rss) FD1=$(fds)
log "$N jobs in ${secs}s; at the end: daemon RssAnon $((RSS1 / 1024)) MiB, $FD1 descriptors ($(traced_now)); $(curl -fsS "$URL" | grep -E '^memattr_(events_dropped|execs_examined)' | tr '\n' ' ')"
# Jobs of other tests traced at either moment weigh too: 3 MiB of margin.
[ $((RSS1 - RSS0)) -le 3072 ] || fail "daemon RssAnon grew by $(((RSS1 - RSS0) / 1024)) MiB over $((N - N / 10)) jobs"
# Jobs of other tests on the node hold files too: a small margin.
[ $((FD1 - FD0)) -le 8 ] || fail "daemon descriptors grew from $FD0 to $FD1"
curl -fsS "$URL" >"$TMPD/m.txt"
grep -q "job=\"$TAG-" "$TMPD/m.txt" && fail "series of ended soak jobs still exposed"
# Every ended process's address space is let go in the kernel too (its id
# back to the pool): a leak would refuse processes after some thousands.
anchors=$(awk '/^memattr_bpf_map_entries\{map="mm_anchors"\}/ { print $2 }' "$TMPD/m.txt")
[ -n "$anchors" ] && [ "$anchors" -le 16 ] ||
	fail "mm_anchors still follows ${anchors:-?} address spaces after every soak job ended"
log "address spaces still followed in the kernel: $anchors"

bad=0
for i in $(seq 1 "$N"); do
	d=$SPOOL/$TAG-$i.u$uid
	f=$(ls "$d"/pid-*.csv.gz 2>/dev/null | head -1)
	if [ -z "$f" ] || ! gzip -t "$f" 2>/dev/null || [ ! -s "$d/summary.csv" ]; then
		bad=$((bad + 1))
		[ "$bad" -le 3 ] && log "job $TAG-$i: $(ls -l "$d" 2>&1 | tr '\n' ' ')"
	fi
done
[ "$bad" -eq 0 ] || fail "$bad of $N jobs without a whole pid-*.csv.gz and summary.csv"
log "all $N jobs: own directory, whole gzip timeline, summary.csv"
stop_daemon
wait_no_bpf_leftovers 10
pass
