#!/bin/bash
# `report` in bounded memory (issue 32, finding 12): its peak RSS on a
# 200 MiB rank timeline must stay what it is on a 50 MiB one. Both are
# synthetic runs (tools/bench/synth_job.c, one rank); the figure compared
# is the kernel's maxrss of each report run, so the test needs no timing.
# Before the streaming reader the report held every sample: ~35 MiB on the
# small file, ~130 MiB on the large one.
#   tools/report-memory-test.sh [BIN]      (default ./memattr-bpf; no root)
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=$(realpath "${1:-./memattr-bpf}")
tmp=$(mktemp -d /tmp/memattr-repmem.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

gcc -O2 -o "$tmp/synth_job" tools/bench/synth_job.c -lm
# ~253 bytes a sample (a total and 5 components).
"$tmp/synth_job" --nodes 1 --ranks-per-node 1 --samples 207000 -o "$tmp/small" >/dev/null
"$tmp/synth_job" --nodes 1 --ranks-per-node 1 --samples 830000 -o "$tmp/large" >/dev/null

# Peak RSS in KiB of `BIN report DIR`, which must succeed.
maxrss() {
	python3 - "$BIN" "$1" <<'PY'
import resource, subprocess, sys
r = subprocess.run([sys.argv[1], "report", sys.argv[2]], stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE, text=True)
if r.returncode != 0:
    sys.exit("report %s: exit %d: %s" % (sys.argv[2], r.returncode, r.stderr.strip()))
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
PY
}

small_mib=$(( $(stat -c %s "$tmp/small/node0000/rank-0.csv") >> 20 ))
large_mib=$(( $(stat -c %s "$tmp/large/node0000/rank-0.csv") >> 20 ))
small=$(maxrss "$tmp/small/node0000")
large=$(maxrss "$tmp/large/node0000")
echo "report-memory: ${small_mib} MiB rank file -> maxrss $((small / 1024)) MiB;" \
     "${large_mib} MiB -> $((large / 1024)) MiB"
# 4x the input: at most a quarter more memory (and 8 MiB of slack), and
# well under what holding the file took.
if [ "$large" -gt $((small * 5 / 4 + 8192)) ] || [ "$large" -gt $((96 * 1024)) ]; then
	echo "report-memory: FAILED: memory grows with the input"
	exit 1
fi
grep -q 'thinned to' "$tmp/large/node0000/report.html" ||
	{ echo "report-memory: FAILED: the page does not say its timeline was thinned"; exit 1; }
echo "report-memory: ok"
