# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# A real Slurm on this machine for one test (source after lib.sh): munged
# with its own key and socket, slurmctld and slurmd from Debian's packages,
# configured in the test's scratch dir (SLURM_CONF points there; nothing in
# /etc is touched), on loopback ports of their own, one node "node1" with
# 4 CPUs, cgroup v1 process tracking (what works on this machine's hybrid
# hierarchy; ../../shared/DESIGN.md, "Slurm and Prometheus on these
# machines"). slurm_start starts it and waits until the node is idle;
# the EXIT trap (slurm_stop) cancels the jobs, stops the daemons by PID and
# removes the job cgroups Slurm made.
#
#   slurm_start            SLURM_DIR, SLURM_CONF, SLURM_NODE (exported);
#                          with SLURM_PLUGSTACK set, its lines are Slurm's
#                          plugstack.conf (SPANK plugins)
#   slurm_as_user CMD...   a Slurm client command as the test user
#   slurm_wait_running JOBID TIMEOUT

SLURM_NODE=node1
SLURM_PIDS=()
# linuxproc: Slurm tracks processes by their tree, no cgroup (task/none).
SLURM_PROCTRACK=${SLURM_PROCTRACK:-cgroup}

slurm_write_conf() {
	local ctld_port slurmd_port
	ctld_port=$(free_port)
	# Neither is bound until Slurm starts: two choices may meet.
	slurmd_port=$ctld_port
	while [ "$slurmd_port" = "$ctld_port" ]; do slurmd_port=$(free_port); done
	cat >"$SLURM_DIR/slurm.conf" <<EOF
ClusterName=memattr-it
SlurmctldHost=localhost
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
AuthInfo=socket=$SLURM_DIR/munge.socket
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$SLURM_DIR/state
SlurmdSpoolDir=$SLURM_DIR/spool
SlurmctldPidFile=$SLURM_DIR/slurmctld.pid
SlurmdPidFile=$SLURM_DIR/slurmd.pid
SlurmctldLogFile=$SLURM_DIR/slurmctld.log
SlurmdLogFile=$SLURM_DIR/slurmd.log
ProctrackType=proctrack/$SLURM_PROCTRACK
TaskPlugin=$([ "$SLURM_PROCTRACK" = cgroup ] && echo task/cgroup || echo task/none)
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
SlurmdParameters=config_overrides
SchedulerParameters=batch_sched_delay=0
KillWait=2
${SLURM_PLUGSTACK:+PlugStackConfig=$SLURM_DIR/plugstack.conf}
NodeName=$SLURM_NODE NodeHostname=$(hostname -s) NodeAddr=127.0.0.1 CPUs=4 State=UNKNOWN
PartitionName=debug Nodes=$SLURM_NODE Default=YES MaxTime=INFINITE State=UP
EOF
	[ -n "${SLURM_PLUGSTACK:-}" ] && printf '%s\n' "$SLURM_PLUGSTACK" >"$SLURM_DIR/plugstack.conf"
	cat >"$SLURM_DIR/cgroup.conf" <<EOF
CgroupPlugin=cgroup/v1
CgroupAutomount=yes
ConstrainCores=no
ConstrainRAMSpace=no
EOF
}

# pid_from_file FILE TIMEOUT: the daemon's pid once it wrote it.
slurm_pid_from_file() {
	local f=$1 timeout=$2 t0=$EPOCHREALTIME
	while [ ! -s "$f" ]; do
		elapsed_since "$t0" "$timeout" && return 1
		sleep 0.05
	done
	cat "$f"
}

slurm_start() {
	local pid t0
	SLURM_DIR=$TMPD/slurm
	mkdir -p "$SLURM_DIR/state" "$SLURM_DIR/spool"
	chmod 755 "$SLURM_DIR"
	export SLURM_CONF=$SLURM_DIR/slurm.conf
	slurm_write_conf
	dd if=/dev/urandom of="$SLURM_DIR/munge.key" bs=1024 count=1 2>/dev/null
	chmod 400 "$SLURM_DIR/munge.key"
	munged --force --key-file="$SLURM_DIR/munge.key" --socket="$SLURM_DIR/munge.socket" \
		--pid-file="$SLURM_DIR/munged.pid" --log-file="$SLURM_DIR/munged.log" \
		--seed-file="$SLURM_DIR/munged.seed" ||
		fail "munged did not start: $(tail -3 "$SLURM_DIR/munged.log" 2>/dev/null)"
	pid=$(slurm_pid_from_file "$SLURM_DIR/munged.pid" 10) || fail "munged wrote no pid file"
	SLURM_PIDS+=("$pid")
	# The test's status survives the teardown: it_cleanup reads it from \$?.
	trap '_slurm_rc=$?; slurm_stop; (exit $_slurm_rc); it_cleanup' EXIT
	slurmctld -f "$SLURM_CONF" -i ||
		fail "slurmctld did not start: $(tail -5 "$SLURM_DIR/slurmctld.log" 2>/dev/null)"
	pid=$(slurm_pid_from_file "$SLURM_DIR/slurmctld.pid" 15) || fail "slurmctld wrote no pid file"
	SLURM_PIDS+=("$pid")
	slurmd -f "$SLURM_CONF" -N "$SLURM_NODE" ||
		fail "slurmd did not start: $(tail -5 "$SLURM_DIR/slurmd.log" 2>/dev/null)"
	pid=$(slurm_pid_from_file "$SLURM_DIR/slurmd.pid" 15) || fail "slurmd wrote no pid file"
	SLURM_PIDS+=("$pid")
	t0=$EPOCHREALTIME
	until sinfo -h -n "$SLURM_NODE" -o %t 2>/dev/null | grep -q idle; do
		elapsed_since "$t0" 30 && fail "node $SLURM_NODE not idle after 30 s: $(sinfo 2>&1 | tail -2); $(tail -3 "$SLURM_DIR/slurmd.log")"
		sleep 0.2
	done
	log "slurm up in $(seconds_since "$t0")s (SLURM_CONF=$SLURM_CONF)"
}

# Jobs cancelled first (stopping the daemons leaves jobs running), then the
# daemons by PID, then whatever is left in the job cgroups Slurm made.
slurm_stop() {
	local pid p d
	set +e
	[ -n "${SLURM_CONF:-}" ] && [ -f "$SLURM_CONF" ] && scancel --full --quiet --user "$TEST_USER" 2>/dev/null
	sleep 0.5
	for ((p = ${#SLURM_PIDS[@]} - 1; p >= 0; p--)); do
		pid=${SLURM_PIDS[p]}
		kill -TERM "$pid" 2>/dev/null
	done
	for pid in "${SLURM_PIDS[@]}"; do
		for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$pid" 2>/dev/null
	done
	SLURM_PIDS=()
	for d in /sys/fs/cgroup/*/slurm_"$SLURM_NODE"; do
		[ -d "$d" ] || continue
		find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null | xargs -r kill -KILL 2>/dev/null
		find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	set -e
}

# A Slurm client command as the test user, with this Slurm's configuration.
slurm_as_user() {
	as_user env SLURM_CONF="$SLURM_CONF" "$@"
}

# slurm_wait_running JOBID TIMEOUT
slurm_wait_running() {
	local job=$1 timeout=$2 t0=$EPOCHREALTIME st
	while :; do
		st=$(squeue -h -j "$job" -o %T 2>/dev/null)
		[ "$st" = RUNNING ] && return 0
		elapsed_since "$t0" "$timeout" && fail "job $job not running after ${timeout}s (state '$st'): $(tail -3 "$SLURM_DIR/slurmctld.log")"
		sleep 0.1
	done
}

# slurm_hold_job NP COMMAND-LINE: sbatch, as the test user, a script of
# NP tasks running COMMAND-LINE (ranks of mpi_hold logging to $LOGS), wait
# until it runs and its NP ranks are ready; JOB is its ID.
slurm_hold_job() {
	local np=$1 cmd=$2 t0
	printf '%s\n' '#!/bin/bash' "#SBATCH -n $np" "#SBATCH -o $TMPD/slurm-job.out" "#SBATCH -D $TMPD" \
		"$cmd" >"$TMPD/job.sbatch"
	chmod 755 "$TMPD/job.sbatch"
	: >"$TMPD/slurm-job.out"
	chown "$TEST_USER" "$TMPD/slurm-job.out"
	JOB=$(slurm_as_user sbatch --parsable "$TMPD/job.sbatch") || fail "sbatch failed"
	log "submitted batch job $JOB"
	slurm_wait_running "$JOB" 30
	t0=$EPOCHREALTIME
	until [ "$(cat "$LOGS"/hold-rank-*.csv 2>/dev/null | grep -c '^ready,')" -eq "$np" ]; do
		elapsed_since "$t0" 60 && fail "ranks not ready after 60 s: $(cat "$TMPD/slurm-job.out")"
		sleep 0.1
	done
}
