#!/bin/bash
# Run the libFuzzer harnesses (make fuzz-build) for a bounded time each.
#   tools/fuzz.sh SECONDS [NAME...]     NAME: spec report maps environ stat export
# Each starts from its committed seeds (tests/fuzz/corpus/NAME, never
# modified) plus what earlier runs found (build-fuzz/corpus-NAME), and
# prints one line: executions, new inputs, and whether it crashed. A crash
# leaves its input in build-fuzz/NAME-crash-* and the run exits 1; replay it
# with build-fuzz/fuzz_NAME FILE. Longer runs: tools/fuzz.sh 3600 report.
# The mutation seed is fixed (FUZZ_SEED, default 1) so that CI's short run
# explores the same inputs every time: what it finds is a regression of the
# code, reproducible, not a draw. Explore with FUZZ_SEED=0 (random) and long
# runs, and commit what they find to the seed corpus.
set -uo pipefail
cd "$(dirname "$0")/.."

SECONDS_EACH=${1:?usage: tools/fuzz.sh SECONDS [NAME...]}
shift
NAMES=("$@")
[ ${#NAMES[@]} -gt 0 ] || NAMES=(spec report maps environ stat export)
B=build-fuzz
failed=0
total=0

for n in "${NAMES[@]}"; do
	bin=$B/fuzz_$n
	[ -x "$bin" ] || { echo "fuzz: $bin missing (make fuzz-build)" >&2; exit 2; }
	mkdir -p "$B/corpus-$n"
	log=$B/$n.log
	rc=0
	# One process, no forks: the machine is shared. -max_len covers a
	# whole smaps of a small process and a multi-file report input.
	"$bin" -seed="${FUZZ_SEED:-1}" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 \
		-max_len=8192 -print_final_stats=1 -artifact_prefix="$B/$n-" \
		"$B/corpus-$n" "tests/fuzz/corpus/$n" >"$log" 2>&1 || rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	news=$(find "$B/corpus-$n" -type f | wc -l)
	total=$((total + ${execs:-0}))
	if [ "$rc" -ne 0 ]; then
		failed=$((failed + 1))
		echo "fuzz_$n: FAILED (exit $rc) after ${execs:-?} executions; see $log:"
		grep -m 5 -E 'ERROR|runtime error|Test unit written' "$log" | sed 's/^/    /'
	else
		echo "fuzz_$n: ${execs:-?} executions in ${SECONDS_EACH} s, corpus $news inputs, no crash"
	fi
done
echo "fuzz: $total executions, $failed harness(es) failed"
[ "$failed" -eq 0 ]
