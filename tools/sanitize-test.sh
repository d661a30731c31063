#!/bin/bash
# Runs of the sanitizer build (make sanitize-test builds build-san/memattr-bpf
# with ASan + UBSan, stopping at the first error):
#   tools/sanitize-test.sh report BIN   `report` on every fixture run in
#       tests/unit/fixtures/report (copies): good ones must give a page,
#       bad ones a clean refusal, none a sanitizer report; then `merge` of
#       synthetic per-node datasets, its report and a refused merge; then
#       `model` of synthetic runs at 2, 4 and 8 ranks and two refusals.
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

# merge of synthetic per-node datasets (tools/bench/synth_job.c), its
# report, and a refusal found while writing (a bad row): no sanitizer report.
merge_synthetic() {
	local tmp rc=0
	tmp=$(mktemp -d /tmp/memattr-san.XXXXXX)
	trap 'rm -rf "$tmp"' RETURN
	gcc -O1 -o "$tmp/synth_job" tools/bench/synth_job.c -lm
	"$tmp/synth_job" --nodes 3 --ranks-per-node 4 --samples 20 -o "$tmp/nodes"
	"$BIN" merge "$tmp"/nodes/node* -o "$tmp/job" >"$tmp/merge.out" 2>"$tmp/merge.err" || rc=$?
	[ "$rc" -eq 0 ] && "$BIN" report "$tmp/job" >/dev/null 2>>"$tmp/merge.err" || rc=$?
	if sanitizer_said "$tmp/merge.err" || [ "$rc" -ne 0 ] || [ ! -s "$tmp/job/report.html" ]; then
		echo "sanitize: merge and report of 3 synthetic nodes: exit $rc:"
		head -n 30 "$tmp/merge.err" | sed 's/^/    /'
		return 1
	fi
	echo "1.0,4,99,app,notanumber,0" >>"$tmp/nodes/node0001/rank-4.csv"
	rc=0
	"$BIN" merge "$tmp"/nodes/node* -o "$tmp/bad" >/dev/null 2>"$tmp/bad.err" || rc=$?
	if sanitizer_said "$tmp/bad.err" || [ "$rc" -ne 1 ] || [ -e "$tmp/bad" ]; then
		echo "sanitize: merge of a bad row: exit $rc, expected a refusal:"
		head -n 30 "$tmp/bad.err" | sed 's/^/    /'
		return 1
	fi
	echo "sanitize: merge, report and a refused merge of synthetic nodes under ASan+UBSan: as expected"
}

# model of synthetic runs at 2, 4 and 8 ranks, with its CSV, and two
# refusals (too few runs, a bad --predict): no sanitizer report.
model_synthetic() {
	local tmp rc=0 p
	tmp=$(mktemp -d /tmp/memattr-san.XXXXXX)
	trap 'rm -rf "$tmp"' RETURN
	gcc -O1 -o "$tmp/synth_job" tools/bench/synth_job.c -lm
	for p in 2 4 8; do
		"$tmp/synth_job" --nodes 1 --ranks-per-node $p --samples 10 -o "$tmp/np$p"
	done
	"$BIN" model "$tmp"/np{2,4,8}/node0000 --predict 64 -o "$tmp/model.csv" \
		>"$tmp/model.out" 2>"$tmp/model.err" || rc=$?
	if sanitizer_said "$tmp/model.err" || [ "$rc" -ne 0 ] || [ ! -s "$tmp/model.csv" ]; then
		echo "sanitize: model of 3 synthetic runs: exit $rc:"
		head -n 30 "$tmp/model.err" | sed 's/^/    /'
		return 1
	fi
	for args in "np2/node0000 np4/node0000" "np2/node0000 np4/node0000 np8/node0000 --predict 0"; do
		rc=0
		(cd "$tmp" && "$BIN" model $args) >/dev/null 2>"$tmp/bad.err" || rc=$?
		if sanitizer_said "$tmp/bad.err" || [ "$rc" -ne 1 ]; then
			echo "sanitize: model $args: exit $rc, expected a refusal:"
			head -n 30 "$tmp/bad.err" | sed 's/^/    /'
			return 1
		fi
	done
	echo "sanitize: model of synthetic runs and two refusals under ASan+UBSan: as expected"
}

case $MODE in
report) report_fixtures && merge_synthetic && model_synthetic ;;
trace)
	export KEEP_TMP= MEMATTR_BIN=$BIN
	for t in test_report test_output_full_disk test_hostile_files test_bad_input; do
		MEMATTR_STRACE= ONLY=$t tests/integration/run_all.sh
	done
	;;
*) echo "usage: tools/sanitize-test.sh report|trace BIN" >&2; exit 2 ;;
esac
