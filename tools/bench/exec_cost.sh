#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# What the idle node service's programs cost each fork, exec and exit of
# a process it does not trace (issue 34), by the kernel's own count
# (kernel.bpf_stats_enabled, on only while the loop runs): per repetition,
# `memattr-bpf daemon` is started, spawnloop runs --n commands of
# /bin/true as the test user under `env -i` with a PAD variable of
# --env-bytes bytes, and each program's run time per call is printed with
# the loop's CPU time per command. With --base DIR, a second tree's tool
# (e.g. a worktree of main) runs too, the order alternating from one
# repetition to the next. Loads BPF: run it under the integration lock.
#
#   sudo tools/bench/exec_cost.sh [--n N] [--env-bytes B] [--reps R] [--base DIR]
#
# prints: tree<TAB>program<TAB>calls<TAB>ns per call<TAB>loop CPU ns per command
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
N=2000 ENVB=1300 REPS=3 BASE=""
USER_=${MEMATTR_TEST_USER:-memattr-test}

die() { echo "exec_cost.sh: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
	case $1 in
	--n) N=${2:?}; shift 2 ;;
	--env-bytes) ENVB=${2:?}; shift 2 ;;
	--reps) REPS=${2:?}; shift 2 ;;
	--base) BASE=$(cd "${2:?}" && pwd); shift 2 ;;
	-h | --help) sed -n '3,15p' "$0"; exit 0 ;;
	*) die "unknown argument '$1' (--help)" ;;
	esac
done
[ "$(id -u)" = 0 ] || die "run as root (the node service loads BPF programs)"
id "$USER_" >/dev/null 2>&1 || die "no user $USER_ (MEMATTR_TEST_USER)"
for t in "$REPO" $BASE; do [ -x "$t/memattr-bpf" ] || die "no $t/memattr-bpf (make)"; done
[ "$(sysctl -n kernel.bpf_stats_enabled)" = 0 ] || die "kernel.bpf_stats_enabled is on: someone else is measuring"

RES=$(mktemp -d /tmp/memattr-exec-cost.XXXXXX)
chmod 755 "$RES"
make -s -C "$REPO/tools/bench/workloads" OUT="$RES/bin" >/dev/null
chmod -R a+rX "$RES/bin"
PAD=$(head -c "$ENVB" /dev/zero | tr '\0' x)

DAEMON=""
cleanup() {
	sysctl -q kernel.bpf_stats_enabled=0
	if [ -n "$DAEMON" ]; then
		kill -TERM "$DAEMON" 2>/dev/null || true
		wait "$DAEMON" 2>/dev/null || true
	fi
}
trap cleanup EXIT

one() {	# LABEL TREE
	local port=$((20000 + RANDOM % 20000)) cpu
	"$2/memattr-bpf" daemon --spool "$RES/spool" --listen "127.0.0.1:$port" 2>>"$RES/daemon.err" &
	DAEMON=$!
	for _ in $(seq 300); do
		curl -sf -o /dev/null "http://127.0.0.1:$port/metrics" && break
		kill -0 "$DAEMON" 2>/dev/null || die "the daemon exited (see $RES/daemon.err)"
		sleep 0.1
	done
	sysctl -q kernel.bpf_stats_enabled=1
	python3 "$REPO/tools/bench/bpfstats.py" snap "$DAEMON" >"$RES/a.json"
	runuser -u "$USER_" -- env -i PATH=/usr/bin:/bin HOME=/tmp LANG=C.UTF-8 PAD="$PAD" \
		"$RES/bin/spawnloop" --n "$N" >"$RES/spawn.out"
	python3 "$REPO/tools/bench/bpfstats.py" snap "$DAEMON" >"$RES/b.json"
	sysctl -q kernel.bpf_stats_enabled=0
	kill -TERM "$DAEMON"
	wait "$DAEMON" || die "the daemon exited with an error (see $RES/daemon.err)"
	DAEMON=""
	cpu=$(awk '/^CPU ns_per_unit/ { print $3 }' "$RES/spawn.out")
	python3 "$REPO/tools/bench/bpfstats.py" diff "$RES/a.json" "$RES/b.json" |
		awk -v l="$1" -v c="$cpu" '$1 ~ /^ma_(fork|exec|exit|exit_task)$/ { printf "%s\t%s\t%d\t%.0f\t%s\n", l, $1, $2, $3 / $2, c }'
}

for r in $(seq "$REPS"); do
	if [ -z "$BASE" ]; then
		one this "$REPO"
	elif [ $((r % 2)) = 1 ]; then
		one base "$BASE"; one this "$REPO"
	else
		one this "$REPO"; one base "$BASE"
	fi
done
rm -rf "$RES"
