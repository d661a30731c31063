#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# How much attaching to a running rank slows it (issue 31): a 1-rank Open MPI
# job holding about a GiB (attach_stall.c) works in short chunks; 2.5 s in,
# `memattr-bpf --job <mpirun pid>` attaches and infers the owners of what it
# holds. Prints, per run: the tool's inference line (CPU s, MiB read), the
# attach's wall time, the rank's longest chunk in the 2 s around the attach
# and the median of its windows' longest chunks before it.
#   sudo tools/validate/attach_stall.sh [RUNS] [MIB]     (default 3 runs, 1500)
# Runs as the unprivileged user memattr-test (MEMATTR_TEST_USER); only the
# processes it starts are signalled.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
runs=${1:-3} mib=${2:-1500} user=${MEMATTR_TEST_USER:-memattr-test}
tool=${MEMATTR_BIN:-$top/memattr-bpf}
[ "$(id -u)" -eq 0 ] || { echo "attach_stall.sh: must run as root" >&2; exit 2; }
work=$(mktemp -d /tmp/memattr-stall.XXXXXX)
chmod 755 "$work"
mpicc.openmpi -O2 -o "$work/attach_stall" "$top/tools/validate/attach_stall.c"
for i in $(seq 1 "$runs"); do
	d=$work/run-$i
	mkdir -p "$d" && chmod 755 "$d"
	runuser -u "$user" -- mpirun.openmpi -np 1 "$work/attach_stall" "$mib" 10 >"$d/chunks.txt" 2>"$d/job.err" &
	job=$!
	until grep -q ready "$d/job.err" 2>/dev/null; do
		kill -0 "$job" 2>/dev/null || { echo "attach_stall.sh: the job ended early: $(tail -1 "$d/job.err")" >&2; exit 1; }
		sleep 0.05
	done
	lp=$(pgrep -P "$job" -x mpirun.openmpi || pgrep -P "$job" || echo "$job")
	sleep 2.5
	t0=$EPOCHREALTIME
	"$tool" --verbose --output "$d/tool" --job "$lp" >"$d/tool.out" 2>"$d/tool.err" &
	tp=$!
	until grep -q '^memattr-bpf: tracing' "$d/tool.err"; do
		kill -0 "$tp" 2>/dev/null || { echo "attach_stall.sh: the tool ended: $(tail -1 "$d/tool.err")" >&2; exit 1; }
		sleep 0.01
	done
	t1=$EPOCHREALTIME
	wait "$job"
	wait "$tp"
	wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
	around=$(awk '$1 >= 2.4 && $1 < 4.5 && $2 > m { m = $2 } END { printf "%.1f", m }' "$d/chunks.txt")
	before=$(awk '$1 < 2.4 { print $2 }' "$d/chunks.txt" | sort -n |
		 awk '{ v[NR] = $1 } END { printf "%.2f", v[int((NR + 1) / 2)] }')
	echo "run $i: attach ${wall} s wall; $(grep -o 'inferred owners of .*' "$d/tool.err" | head -1)"
	echo "  the rank's longest chunk around the attach ${around} ms; before it, the median 100 ms window's longest ${before} ms"
done
echo "attach_stall.sh: files in $work"
