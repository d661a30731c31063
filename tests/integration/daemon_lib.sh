# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Helpers of the node service tests (test_daemon_*.sh); source after lib.sh.
# Every server started here is tracked by PID (lib.sh) and stopped by PID.

# user_spool_dir SPOOL USER ID: the directory of a job USER's processes
# claim by their environment only (no batch system vouches for it): its
# name ends in the uid, SPOOL/<ID>.u<uid> (spool.c), so no other user can
# take it.
user_spool_dir() {
	echo "$1/$3.u$(id -u "$2")"
}

# start_daemon ARGS...: memattr-bpf daemon as root; DAEMON_PID, DAEMON_ERR.
# Waits for its "watching" line. Without --socket in ARGS, its user socket
# goes under $TMPD: tests never take the node's /run/memattr-bpf, and two
# tests' daemons never contend for one socket.
start_daemon() {
	DAEMON_ERR=$TMPD/daemon.err.$RANDOM
	[[ " $* " == *" --socket "* ]] || set -- "$@" --socket "$TMPD/run.$RANDOM/memattr.sock"
	log "starting: memattr-bpf daemon $*"
	local t0=$EPOCHREALTIME
	env --default-signal=INT,QUIT "$MEMATTR_BIN" daemon "$@" >"$TMPD/daemon.out" 2>"$DAEMON_ERR" &
	DAEMON_PID=$!
	track_pid "$DAEMON_PID"
	while ! grep -q '^memattr-bpf: daemon: watching' "$DAEMON_ERR"; do
		pid_running "$DAEMON_PID" || fail "daemon exited before it was ready: $(cat "$DAEMON_ERR")"
		elapsed_since "$t0" 30 && fail "daemon not ready after 30 s: $(cat "$DAEMON_ERR")"
		sleep 0.05
	done
	log "daemon ready after $(seconds_since "$t0")s (pid $DAEMON_PID)"
}

# stop_daemon: SIGTERM, which must end it with status 0 within 15 s.
stop_daemon() {
	kill -TERM "$DAEMON_PID"
	wait_exit "$DAEMON_PID" 15 || fail "daemon still running 15 s after SIGTERM"
	[ "$WAIT_RC" -eq 0 ] || fail "daemon exited with status $WAIT_RC after SIGTERM: $(tail -5 "$DAEMON_ERR")"
	log "daemon stopped by SIGTERM (status 0)"
}

# wait_daemon_line REGEX TIMEOUT: until the daemon's log has a line matching
# REGEX. A rank's series go at its exit, the job's "ended" line only once
# the job's last process (the launcher too) is gone and the next sample
# closes its files: poll, do not expect the two at once.
wait_daemon_line() {
	local re=$1 timeout=$2 t0=$EPOCHREALTIME
	until grep -q "$re" "$DAEMON_ERR"; do
		elapsed_since "$t0" "$timeout" && return 1
		sleep 0.1
	done
	return 0
}

# wait_http URL TIMEOUT: until URL answers 200.
wait_http() {
	local url=$1 timeout=$2 t0=$EPOCHREALTIME
	until curl -fsS -o /dev/null --max-time 2 "$url" 2>/dev/null; do
		elapsed_since "$t0" "$timeout" && fail "$url not answering after ${timeout}s"
		sleep 0.1
	done
}

# start_prometheus TARGET: a real Prometheus on loopback scraping TARGET
# (host:port) every second; PROM_URL, PROM_PID.
start_prometheus() {
	local target=$1 port
	port=$(free_port)
	mkdir -p "$TMPD/prom"
	cat >"$TMPD/prom/prometheus.yml" <<EOC
global:
  scrape_interval: 1s
  scrape_timeout: 900ms
scrape_configs:
  - job_name: memattr
    # The series carry their own "job" label (the batch job): keep it, or
    # Prometheus renames it exported_job in favour of the scrape job's name.
    honor_labels: true
    static_configs:
      - targets: ['$target']
EOC
	prometheus --config.file="$TMPD/prom/prometheus.yml" --storage.tsdb.path="$TMPD/prom/data" \
		--web.listen-address="127.0.0.1:$port" >"$TMPD/prom/prometheus.log" 2>&1 &
	PROM_PID=$!
	track_pid "$PROM_PID"
	PROM_URL=http://127.0.0.1:$port
	wait_http "$PROM_URL/-/ready" 30
	log "prometheus ready at $PROM_URL (pid $PROM_PID), scraping $target every 1 s"
}

# stop_server PID NAME: SIGTERM, then SIGKILL after 10 s; only what we started.
stop_server() {
	local pid=$1 name=$2
	pid_running "$pid" || return 0
	kill -TERM "$pid" 2>/dev/null || true
	wait_exit "$pid" 10 || { kill -KILL "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; }
	log "$name (pid $pid) stopped"
}

# prom_value EXPR: the first sample value of an instant query, "" when none.
prom_value() {
	curl -fsS --max-time 5 --get "$PROM_URL/api/v1/query" --data-urlencode "query=$1" |
		"$PY" -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")'
}

# user_job USER NP JOBID MIB SECONDS OUT: mpi_hold as USER in the background,
# with SLURM_JOB_ID=JOBID; sets UJOB_PID (runuser, whose status is mpirun's).
user_job() {
	local user=$1 np=$2 id=$3 mib=$4 secs=$5 out=$6 home
	home=$(getent passwd "$user" | cut -d: -f6)
	[ -d "$home" ] || home=$TMPD
	runuser -u "$user" -- env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$home" USER="$user" \
		LOGNAME="$user" mpirun --oversubscribe -np "$np" -x "SLURM_JOB_ID=$id" \
		"$TMPD/bin/mpi_hold" --hold-mib "$mib" --hold-s "$secs" >"$out" 2>&1 &
	UJOB_PID=$!
	track_pid "$UJOB_PID"
	log "job $id: $np ranks of $user holding $mib MiB for ${secs}s (runuser pid $UJOB_PID)"
}

# A second unprivileged user, for jobs of two owners.
ensure_second_user() {
	TEST_USER2=${MEMATTR_TEST_USER2:-memattr-test2}
	if ! id -u "$TEST_USER2" >/dev/null 2>&1; then
		useradd -m -s /bin/bash "$TEST_USER2" 2>/dev/null || id -u "$TEST_USER2" >/dev/null 2>&1 ||
			fail "cannot create user $TEST_USER2"
	fi
}

# metric_value FILE REGEX: the value of the first exposition line matching REGEX.
metric_value() {
	grep -E "$2" "$1" | head -1 | awk '{ print $NF }'
}

# two_users_one_socket: the node service with its user socket ($SOCK) and
# two jobs, $A of $TEST_USER (pid $PA) and $B of $TEST_USER2 (pid $PB),
# 4 MiB for 25 s each; job A's directory ($ADIR) holds 600 empty rank
# files, so its answer is long. $U2: a directory of the second user's.
two_users_one_socket() {
	local id i
	ensure_second_user
	SPOOL=$TMPD/spool
	SOCKDIR=$TMPD/run
	install -d -m 0755 "$SOCKDIR"
	SOCK=$SOCKDIR/memattr.sock
	BASE=$((900000 + RANDOM * 32 + RANDOM % 32))
	A=$BASE B=$((BASE + 1))
	install -m 0755 "$MEMATTR_BIN" "$TMPD/bin/memattr-bpf"
	U2=$TMPD/u2
	install -d -o "$TEST_USER2" -m 0700 "$U2"

	start_daemon --spool "$SPOOL" --listen none --socket "$SOCK" --interval 200
	user_job "$TEST_USER" 1 "$A" 4 25 "$TMPD/jobA.out"; PA=$UJOB_PID
	user_job "$TEST_USER2" 1 "$B" 4 25 "$TMPD/jobB.out"; PB=$UJOB_PID
	for id in "$A" "$B"; do
		wait_daemon_line "job $id of " 15 || fail "daemon did not pick up job $id: $(cat "$DAEMON_ERR")"
	done
	ADIR=$(user_spool_dir "$SPOOL" "$TEST_USER" "$A")
	for i in $(seq 1000 1599); do : >"$ADIR/rank-$i.csv.gz"; done
}

# user2_served_within SECS WHY: the second user's --job $B through $SOCK
# must succeed within SECS seconds (taken in $TOOK) while WHY, with its
# rank-0.csv in $U2/B.
user2_served_within() {
	local secs=$1 why=$2 t0
	t0=$EPOCHREALTIME
	runuser -u "$TEST_USER2" -- env -i PATH=/usr/bin:/bin HOME="$U2" timeout 15 "$TMPD/bin/memattr-bpf" --job "$B" \
		--output "$U2/B" --socket "$SOCK" --duration 1 >"$TMPD/b.out" 2>"$TMPD/b.err" ||
		fail "user 2's request failed while $why: $(cat "$TMPD/b.err")"
	TOOK=$(seconds_since "$t0")
	"$PY" -c 'import sys; sys.exit(0 if float(sys.argv[1]) < float(sys.argv[2]) else 1)' "$TOOK" "$secs" ||
		fail "user 2 was served after ${TOOK}s while $why (expected < $secs s)"
	[ -e "$U2/B/rank-0.csv" ] || fail "user 2's copy has no rank-0.csv: $(ls "$U2/B")"
}
