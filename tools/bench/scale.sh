#!/bin/bash
# Merge and report a job past any test machine (issue 14): synthetic
# per-node datasets (synth_job.c: NODES x RANKS_PER_NODE ranks x SAMPLES
# samples, 6 rows each), then `memattr-bpf merge` and `memattr-bpf report`
# timed with their peak RSS (/usr/bin/time). Prints a Markdown table row.
#
#   tools/bench/scale.sh [NODES [RANKS_PER_NODE [SAMPLES]]]   (default 1000 128 600)
#
# Needs about 45 GB free under SCALE_DIR (default /tmp/memattr-scale) at
# the default size; everything it wrote is removed at the end, but for the
# merged dataset with SCALE_KEEP=1 (to report on it again).
set -euo pipefail
NODES=${1:-1000}
PER_NODE=${2:-128}
SAMPLES=${3:-600}
REPO=$(cd "$(dirname "$0")/../.." && pwd)
DIR=${SCALE_DIR:-/tmp/memattr-scale}
BIN=$REPO/memattr-bpf

[ -x "$BIN" ] || { echo "scale.sh: no $BIN (make)" >&2; exit 1; }
command -v /usr/bin/time >/dev/null || { echo "scale.sh: /usr/bin/time missing (apt-get install time)" >&2; exit 1; }
rm -rf "$DIR"
mkdir -p "$DIR"
if [ "${SCALE_KEEP:-0}" = 1 ]; then
	trap 'rm -rf "$DIR/nodes"' EXIT
else
	trap 'rm -rf "$DIR"' EXIT
fi
gcc -O2 -o "$DIR/synth_job" "$REPO/tools/bench/synth_job.c" -lm

# seconds and peak RSS (MiB) of one command: "S MIB"
timed() {
	/usr/bin/time -f '%e %M' -o "$DIR/time.txt" "$@" >/dev/null
	awk '{ printf "%s %.0f\n", $1, $2 / 1024 }' "$DIR/time.txt"
}

read -r gen_s _ < <(timed "$DIR/synth_job" --nodes "$NODES" --ranks-per-node "$PER_NODE" \
	--samples "$SAMPLES" -o "$DIR/nodes")
in_gb=$(du -sb "$DIR/nodes" | awk '{ printf "%.1f", $1 / 2^30 }')
read -r merge_s merge_mib < <(timed "$BIN" merge "$DIR"/nodes/node* -o "$DIR/job")
out_gb=$(du -sb "$DIR/job" | awk '{ printf "%.1f", $1 / 2^30 }')
rm -rf "$DIR/nodes"
read -r report_s report_mib < <(timed "$BIN" report "$DIR/job")
page_mib=$(stat -c %s "$DIR/job/report.html" | awk '{ printf "%.2f", $1 / 2^20 }')
ranks=$((NODES * PER_NODE))
echo "| $NODES x $PER_NODE ranks x $SAMPLES samples ($ranks ranks, $((ranks * SAMPLES * 6)) rows) | generated in ${gen_s} s, ${in_gb} GB | merge ${merge_s} s, peak RSS ${merge_mib} MiB, ${out_gb} GB out | report ${report_s} s, peak RSS ${report_mib} MiB, page ${page_mib} MiB |"
