#!/bin/bash
# The kernel's exec filter (bpf/exec_filter.h, issue 34): the node service
# is told of an untraced exec only when it may be a job's, and misses none
# that is. As an unprivileged user, beside the daemon:
#  1. 100 execs with no job evidence (an emptied environment, near misses:
#     SLURM_JOB_ID= empty, SLURM_JOB_IDX=1, XPBS_JOBID=1, FOO=PBS_JOBID=1)
#     reach user space for fewer than 50 of them (memattr_execs_examined_total;
#     other processes of the node may exec meanwhile) and are counted in
#     memattr_execs_skipped_total;
#  2. a job is started by a process named only by each kind of evidence,
#     from its exec (within 3 s; the daemon's /proc walk comes every 30 s):
#     PBS_JOBID alone; PMIX_NAMESPACE alone; LSB_JOBID starting 8 bytes
#     before the scan's 4 KiB chunk ends (it straddles two reads) and
#     exactly at a chunk's start; FLUX_JOB_ID after 150 KB of environment;
#     a Slurm v1 cgroup (freezer/slurm_<x>/uid_<U>/job_<N>/step_0) and a v2
#     one (unified/<x>_slurmstepd.scope/job_<N>/step_0), with no variable;
#  3. an environment past the filter's bound (300 KB) is reported anyway
#     and counted in memattr_execs_undecided_total (fail open);
#  4. the per-job command, which never watches untraced execs, loads
#     ma_exec without the filter (the exec_filter flag cleared before
#     load): the verifier drops it, so that ma_exec is less than three
#     quarters of the daemon's (bytes_xlated). Its verification was most
#     of a late attach's start (docs/benchmark-history.md).
#
# Mutations checked to fail it:
#  - `if (watch_exec && exec_may_be_job(p))` -> `if (watch_exec)` in ma_exec
#    (every exec reported): part 1 fails (examined +306 for 100 commands);
#  - `if (n > EXEC_ENV_CHUNK + 16) n = EXEC_ENV_CHUNK + 16;` -> the same with
#    EXEC_ENV_CHUNK in env_word (a chunk read without the 16 bytes after
#    it): part 2 fails at the LSB_JOBID across two chunks;
#  - exec_cgroup_verdict returning EXEC_NO_JOB at once: part 2 fails at the
#    Slurm v1 cgroup;
#  - `cgrp->root == w->dfl_root` -> `!=` in cg_subsys_job (each v1
#    controller skipped as if in v2's hierarchy): part 2 fails at the Slurm
#    v1 cgroup;
#  - `return EXEC_UNDECIDED` -> `return EXEC_NO_JOB` for an environment past
#    EXEC_ENV_MAX: part 3 fails (not counted undecided).
#  - `modes.watch_exec = opt->watch_exec` -> `= true` in tracker_init (the
#    per-job command loads the filter too): part 4 fails.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"

command -v curl >/dev/null || fail "curl not installed (tools/install-deps.sh)"
it_setup
U=$TEST_USER
UID_=$(id -u "$U")
PORT=$(free_port)
URL=http://127.0.0.1:$PORT/metrics
TAG=s8ef$RANDOM
N1=$((700000 + RANDOM)) N2=$((N1 + 1))
CG1=/sys/fs/cgroup/freezer/slurm_$TAG/uid_$UID_/job_$N1/step_0
CG2=/sys/fs/cgroup/unified/${TAG}_slurmstepd.scope/job_$N2/step_0

# Processes put in our cgroups are ours: ended by PID, then the directories go.
cg_cleanup() {
	local cg p
	for cg in "$CG1" "$CG2"; do
		[ -e "$cg/cgroup.procs" ] || continue
		for p in $(cat "$cg/cgroup.procs"); do kill -KILL "$p" 2>/dev/null || true; done
	done
	sleep 0.2
	rmdir "$CG1" "${CG1%/*}" "${CG1%/*/*}" "${CG1%/*/*/*}" 2>/dev/null || true
	rmdir "$CG2" "${CG2%/*}" "${CG2%/*/*}" 2>/dev/null || true
}
trap 'rc=$?; set +e; cg_cleanup; (exit $rc); it_cleanup' EXIT

metric() {	# NAME: its value now (the whole page read first: awk stops early)
	curl -fsS "$URL" >"$TMPD/metrics.txt" || fail "no metrics at $URL"
	awk -v m="$1" '$1 == m { print $2; exit }' "$TMPD/metrics.txt"
}
# A process of the user with exactly the environment given ("env -i").
as_u_env() { runuser -u "$U" -- env -i "$@"; }
xs() { head -c "$1" /dev/zero | tr '\0' x; }

start_daemon --spool "$TMPD/spool" --listen "127.0.0.1:$PORT" --interval 100
wait_http "$URL" 10
# The kernel's counters reach the metrics with each sample: let one pass.
sleep 0.5

# ---- 1. execs with no job evidence.
e0=$(metric memattr_execs_examined_total) s0=$(metric memattr_execs_skipped_total)
for i in $(seq 100); do
	as_u_env PATH=/usr/bin:/bin SLURM_JOB_ID= SLURM_JOB_IDX=1 XPBS_JOBID=1 FOO=PBS_JOBID=1 /bin/true ||
		fail "exec $i failed"
done
sleep 1
e1=$(metric memattr_execs_examined_total) s1=$(metric memattr_execs_skipped_total)
log "100 commands of no job (300 execs: runuser, env, true): examined +$((e1 - e0)), skipped +$((s1 - s0))"
[ $((e1 - e0)) -lt 50 ] || fail "execs with no job evidence reached user space: examined +$((e1 - e0)) for 100"
[ $((s1 - s0)) -ge 100 ] || fail "memattr_execs_skipped_total +$((s1 - s0)), expected >= 100"

# ---- 2. each kind of evidence starts its job from the exec.
expect_job() {	# ID WHAT: the daemon starts job ID within 3 s
	wait_daemon_line "job $1 of $U:" 3 ||
		fail "$2: no job $1 started within 3 s: $(grep "job " "$DAEMON_ERR" | tail -5)"
	log "$2: job $1 started"
}
as_u_env PBS_JOBID="$TAG-pbs.srv" /bin/sleep 8 & track_pid $!
expect_job "$TAG-pbs.srv" "PBS_JOBID alone"
as_u_env PMIX_NAMESPACE="$TAG-pmix" /bin/sleep 8 & track_pid $!
expect_job "$TAG-pmix" "PMIX_NAMESPACE alone"
# "A=" + k bytes + '\0' puts the next entry at offset k + 3.
as_u_env A="$(xs 4085)" LSB_JOBID="$TAG-lsb1" /bin/sleep 8 & track_pid $!
expect_job "$TAG-lsb1" "LSB_JOBID at offset 4088 (across two chunks)"
as_u_env A="$(xs 4093)" LSB_JOBID="$TAG-lsb2" /bin/sleep 8 & track_pid $!
expect_job "$TAG-lsb2" "LSB_JOBID at offset 4096 (a chunk's first byte)"
BIG=(); for i in $(seq 15); do BIG+=("V$i=$(xs 10000)"); done
as_u_env "${BIG[@]}" FLUX_JOB_ID="$TAG-flux" /bin/sleep 8 & track_pid $!
expect_job "$TAG-flux" "FLUX_JOB_ID after 150 KB of environment"

mkdir -p "$CG1" || fail "cannot make $CG1"
sh -c 'echo $$ >"$1/cgroup.procs" && exec env -i /usr/sbin/runuser -u "$2" -- /bin/sleep 8' _ "$CG1" "$U" &
track_pid $!
expect_job "$N1" "Slurm v1 cgroup, no variable"
if mkdir -p "$CG2" 2>/dev/null; then
	sh -c 'echo $$ >"$1/cgroup.procs" && exec env -i /usr/sbin/runuser -u "$2" -- /bin/sleep 8' _ "$CG2" "$U" &
	track_pid $!
	expect_job "$N2" "Slurm v2 cgroup, no variable"
else
	log "no cgroup v2 hierarchy at /sys/fs/cgroup/unified: v2 layout not tried"
fi

# ---- 3. past the bound: reported, counted.
sleep 0.5
u0=$(metric memattr_execs_undecided_total) e0=$(metric memattr_execs_examined_total)
as_u_env A="$(xs 100000)" B="$(xs 100000)" C="$(xs 100000)" /bin/true || fail "the 300 KB exec failed"
sleep 1
u1=$(metric memattr_execs_undecided_total) e1=$(metric memattr_execs_examined_total)
[ $((u1 - u0)) -ge 1 ] || fail "a 300 KB environment was not counted undecided (+$((u1 - u0)))"
[ $((e1 - e0)) -ge 1 ] || fail "a 300 KB environment was not reported to user space"
log "300 KB environment: undecided +$((u1 - u0)), examined +$((e1 - e0))"

# ---- 4. the per-job command's ma_exec, without the filter.
as_u_env PATH=/usr/bin:/bin /bin/sleep 30 &
track_pid $!
start_tool --pid $! --output "$TMPD/out.perjob"
wait_tool_ready 30
dx=$("$PY" "$IT_DIR/bpf_leftovers.py" --xlated-of "$DAEMON_PID" ma_exec) || fail "the daemon holds no ma_exec"
tx=$("$PY" "$IT_DIR/bpf_leftovers.py" --xlated-of "$TOOL_PID" ma_exec) || fail "the per-job tool holds no ma_exec"
log "ma_exec as loaded: daemon $dx bytes, per-job tool $tx bytes"
[ $((4 * tx)) -lt $((3 * dx)) ] || fail "the per-job tool's ma_exec ($tx bytes) holds the exec filter (the daemon's: $dx bytes)"
kill -INT "$TOOL_PID"
wait_exit "$TOOL_PID" 15 || fail "the per-job tool did not stop on SIGINT"

stop_daemon
pass
