#!/bin/bash
# Demo: build memattr-bpf, start a small 4-rank MPI job as an unprivileged
# user (the way real jobs run), attach to it with --job <mpirun pid> once it
# is running, and when the job ends show where the CSVs are and each rank's
# peaks from summary.csv.
#   sudo tools/demo.sh [--bin PATH] [OUTPUT_DIR]
# --bin PATH: run that memattr-bpf (an installed one, /usr/sbin/memattr-bpf)
# instead of building this tree's; only the demo's MPI program is built.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
BIN=
if [ "${1:-}" = --bin ]; then
	[ $# -ge 2 ] && [ -x "$2" ] || { echo "demo.sh: --bin needs an executable memattr-bpf" >&2; exit 1; }
	BIN=$2
	shift 2
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "demo.sh: must run as root (memattr-bpf loads BPF programs); try: sudo $0" >&2
	exit 1
fi
OUT=${1:-/tmp/memattr-demo-$(date +%Y%m%d-%H%M%S)}
[ -e "$OUT" ] && { echo "demo.sh: $OUT already exists" >&2; exit 1; }

if [ -z "$BIN" ]; then
	tools/install-deps.sh
	make
	BIN=$REPO/memattr-bpf
fi
make -C tests/workloads
# lib.sh's start_tool runs $MEMATTR_BIN.
export MEMATTR_BIN=$BIN
echo "demo.sh: running $BIN ($("$BIN" --version))"

# The integration-test helpers launch jobs as the test user and clean up
# only what they started.
# shellcheck source=../tests/integration/lib.sh
source "$REPO/tests/integration/lib.sh"
it_setup

NP=4
start_job "$NP" -- "$TMPD/bin/mpi_demo" --go-file "$GO_FILE" --app-mib 8 --steps 5 --step-ms 400
wait_ranks "$NP" 30
start_tool --job "$MPIRUN_PID" --output "$OUT"
wait_tool_ready 30
go
wait_job_ok 120
wait_tool_ok 20 "the job ended"

echo
echo "memattr-bpf's own end-of-run report:"
sed 's/^/    /' "$TMPD/tool.out"
echo
echo "CSVs written to $OUT:"
ls -l "$OUT"
echo
echo "Per-rank peaks (from $OUT/summary.csv):"
"$PY" - "$OUT/summary.csv" <<'PYEOF'
import csv, sys
MIB = 1024 * 1024
rows = list(csv.DictReader(open(sys.argv[1])))
ranks = sorted({r["rank"] for r in rows}, key=lambda x: (not x.isdigit(), int(x) if x.isdigit() else x))
print(f"{'rank':>4} {'pid':>8} {'peak total':>12} {'at s':>6} {'peak app':>10} {'peak mpi':>10}  (RSS, MiB)")
for rk in ranks:
    by = {r["component"]: r for r in rows if r["rank"] == rk}
    def peak(c):
        r = by.get(c)
        return f"{int(r['peak_rss_bytes']) / MIB:10.1f}" if r else f"{'-':>10}"
    tot = by.get("total", {})
    at = float(tot.get("peak_rss_time_s") or 0)
    print(f"{rk:>4} {tot.get('pid', '?'):>8} {peak('total'):>12} {at:6.2f} {peak('app')} {peak('mpi')}")
PYEOF
echo
# One self-contained page with the timelines, heat maps and peak table.
"$BIN" report "$OUT" && echo "Report: $OUT/report.html (open it in a browser; it needs no network)"
