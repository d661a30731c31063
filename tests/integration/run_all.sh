#!/bin/bash
# Run every tests/integration/test_*.sh (as root), print PASS/FAIL per test
# and a closing "N passed, N failed" line; exit non-zero if any failed.
# Each test's own output is shown as it runs, prefixed by nothing, so CI logs
# show which check failed and with which figures.
set -euo pipefail
DIR=$(cd "$(dirname "$0")" && pwd)
PER_TEST_TIMEOUT=${PER_TEST_TIMEOUT:-240}

[ "$(id -u)" -eq 0 ] || { echo "run_all.sh: must run as root (the tests load BPF programs)" >&2; exit 2; }

passed=0
failed=0
results=()
for t in "$DIR"/test_*.sh; do
	name=$(basename "$t" .sh)
	[ -n "${ONLY:-}" ] && [[ $name != *"$ONLY"* ]] && continue
	echo "=== $name"
	start=$EPOCHREALTIME
	rc=0
	# --foreground: the test cleans up its own processes on TERM.
	timeout --foreground -k 10 "$PER_TEST_TIMEOUT" bash "$t" || rc=$?
	secs=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
	if [ "$rc" -eq 0 ]; then
		passed=$((passed + 1))
		results+=("PASS $name (${secs}s)")
	else
		failed=$((failed + 1))
		[ "$rc" -eq 124 ] && rc="timeout after ${PER_TEST_TIMEOUT}s"
		results+=("FAIL $name (${secs}s, exit $rc)")
	fi
	echo "=== ${results[-1]}"
done
echo
echo "Integration test results:"
printf '  %s\n' "${results[@]}"
echo "integration: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
