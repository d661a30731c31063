#!/bin/bash
# Runs of the sanitizer build (make sanitize-test builds build-san/memattr-bpf
# with ASan + UBSan, stopping at the first error):
#   tools/sanitize-test.sh report BIN   `report` on every fixture run in
#       tests/unit/fixtures/report (copies): good ones must give a page,
#       bad ones a clean refusal, none a sanitizer report.
#   tools/sanitize-test.sh trace BIN    (root) a real 4-rank Open MPI job
#       traced by BIN and reported on: tests/integration/test_report.sh (and
#       test_report_bad_input.sh, which the same name selects); then the
#       error paths: a full disk (test_output_full_disk.sh), planted files
#       (test_hostile_files.sh) and bad arguments (test_bad_input.sh, without
#       its strace check: LeakSanitizer cannot run under ptrace).
set -euo pipefail
cd "$(dirname "$0")/.."

MODE=${1:?usage: tools/sanitize-test.sh report|trace BIN}
BIN=$(realpath "${2:?usage: tools/sanitize-test.sh report|trace BIN}")
# A sanitizer error exits 99 and says so, whatever the program's own status.
export ASAN_OPTIONS=${ASAN_OPTIONS:-exitcode=99:detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-exitcode=99:halt_on_error=1:print_stacktrace=1}

sanitizer_said() { grep -Eq 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$1"; }

report_fixtures() {
	local tmp d name rc n=0 bad=0 want
	tmp=$(mktemp -d /tmp/memattr-san.XXXXXX)
	trap 'rm -rf "$tmp"' RETURN
	for d in tests/unit/fixtures/report/*/; do
		name=$(basename "$d")
		cp -r "$d" "$tmp/$name"
		rc=0
		"$BIN" report "$tmp/$name" >"$tmp/$name.out" 2>"$tmp/$name.err" || rc=$?
		# Runs the unit tests expect to be refused; the others must give a page.
		case $name in
		badnum|badsummary|empty|foreign|notime|shortrow|truncated_header) want=1 ;;
		*) want=0 ;;
		esac
		n=$((n + 1))
		if sanitizer_said "$tmp/$name.err" || [ "$rc" -ne "$want" ]; then
			bad=$((bad + 1))
			echo "sanitize: report $name: exit $rc, expected $want:"
			head -n 30 "$tmp/$name.err" | sed 's/^/    /'
		elif [ "$want" -eq 0 ] && [ ! -s "$tmp/$name/report.html" ]; then
			bad=$((bad + 1))
			echo "sanitize: report $name: no report.html"
		fi
	done
	echo "sanitize: report on $n fixture runs under ASan+UBSan: $((n - bad)) as expected, $bad not"
	[ "$bad" -eq 0 ]
}

case $MODE in
report) report_fixtures ;;
trace)
	export KEEP_TMP= MEMATTR_BIN=$BIN
	for t in test_report test_output_full_disk test_hostile_files test_bad_input; do
		MEMATTR_STRACE= ONLY=$t tests/integration/run_all.sh
	done
	;;
*) echo "usage: tools/sanitize-test.sh report|trace BIN" >&2; exit 2 ;;
esac
