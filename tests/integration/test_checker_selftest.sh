#!/bin/bash
# The CSV checker must pass a synthetic run that meets the contract and fail
# each of a set of runs that break exactly one rule: a checker that cannot
# fail would make every other test meaningless. Needs neither root nor BPF.
set -euo pipefail
DIR=$(cd "$(dirname "$0")" && pwd)
if [ -x /usr/bin/python3 ]; then PY=/usr/bin/python3; else PY=python3; fi
TMP=$(mktemp -d /tmp/memattr-it.checker.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

failed=0
run_case() {	# mutation expected-rc [fake_output options...]
	local m=$1 want=$2 d=$TMP/$1${3:-} rc=0
	shift 2
	local extra=()
	[ "$*" = --alloc-mem ] && extra=(--alloc-mem-mib 4)
	mkdir -p "$d"
	"$PY" "$DIR/fake_output.py" "$d" --ranks 3 --mutate "$m" "$@"
	"$PY" "$DIR/check_csv.py" "$d/out" --ranks 3 --sampler "$d/sampler.csv" \
		--phase-dir "$d/logs" "${extra[@]}" >"$d/result" 2>&1 || rc=$?
	if [ "$rc" -ne "$want" ]; then
		echo "FAIL: test_checker_selftest: mutation '$m': checker exit $rc, expected $want"
		sed 's/^/    /' "$d/result"
		failed=$((failed + 1))
	else
		echo "ok: mutation '$m' -> exit $rc $(grep -m1 '^FAIL:' "$d/result" || true)"
	fi
}

run_case none 0
run_case none 0 --alloc-mem
run_case alloc_mem_to_app 1 --alloc-mem
for m in bad_sum bad_pss_sum bad_header world_writable missing_summary missing_rank \
	peak_low app_wrong truncated bad_component negative summary_peak_low summary_final \
	short_row wrong_pid no_malloc symlink; do
	run_case "$m" 1
done
[ "$failed" -eq 0 ] || { echo "FAIL: test_checker_selftest: $failed case(s)"; exit 1; }
echo "PASS: test_checker_selftest"
