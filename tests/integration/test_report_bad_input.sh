#!/bin/bash
# `memattr-bpf report` refuses what is not a memattr-bpf run, as the job's
# user (no root): a directory with no CSVs, CSVs cut short or holding bad
# numbers, another tool's CSVs, a symlinked input; each with one stderr line
# naming the file (and line), a non-zero exit, and no report.html nor
# temporary file left behind. A report.html planted as a symlink is replaced,
# never written through.
source "$(dirname "$0")/lib.sh"

it_setup
cp "$MEMATTR_BIN" "$TMPD/bin/memattr-bpf"
chmod 755 "$TMPD/bin/memattr-bpf"
CASES=$TMPD/cases
install -d -o "$TEST_USER" "$CASES"
HDR="time_s,rank,pid,component,rss_bytes,pss_bytes"

# newcase NAME: an empty directory of the test user's; prints its path.
newcase() {
	install -d -o "$TEST_USER" -m 0750 "$CASES/$1"
	echo "$CASES/$1"
}

good_rank() {	# good_rank FILE RANK: two whole samples
	printf '%s\n0.100,%d,%d,total,3000,1500\n0.100,%d,%d,app,3000,1500\n0.200,%d,%d,total,5000,2500\n0.200,%d,%d,app,5000,2500\n' \
		"$HDR" "$2" $((100 + $2)) "$2" $((100 + $2)) "$2" $((100 + $2)) "$2" $((100 + $2)) >"$1"
}

give() { chown -R "$TEST_USER" "$@"; }

# refused NAME EXPECTED_EXIT PATTERN DIR [ARGS...]: report refuses, one line
# on stderr matching PATTERN (grep -E), nothing left in DIR.
refused() {
	local name=$1 want=$2 pat=$3 dir=$4 rc=0 err lines
	shift 4
	err=$TMPD/$name.err
	as_user "$TMPD/bin/memattr-bpf" report "$@" >"$TMPD/$name.out" 2>"$err" || rc=$?
	[ "$rc" -eq "$want" ] || fail "$name: exit $rc, expected $want; stderr: $(cat "$err")"
	lines=$(wc -l <"$err")
	if [ "$want" -eq 1 ]; then
		[ "$lines" -eq 1 ] || fail "$name: $lines lines on stderr, expected one: $(cat "$err")"
	fi
	grep -Eq -- "$pat" "$err" || fail "$name: stderr does not match '$pat': $(cat "$err")"
	if [ -d "$dir" ]; then
		[ ! -e "$dir/report.html" ] || fail "$name: report.html left behind"
		ls -A "$dir" | grep -q '^\.report\.html\.tmp' && fail "$name: temporary file left behind"
	fi
	log "$name: refused (exit $rc): $(head -1 "$err")"
}

# 1. Nothing there, or nothing of ours.
d=$(newcase empty)
refused empty 1 "$d: no rank-<R>.csv or pid-<P>.csv" "$d" "$d"
d=$(newcase unrelated)
printf 'a,b\n1,2\n' >"$d/data.csv"
printf 'notes\n' >"$d/README"
good_rank "$d/summary.csv" 0	# a summary alone is not a run
give "$d"
refused unrelated 1 "no rank-<R>.csv" "$d" "$d"

# 2. Cut short: in the header, and inside a row that is not the last.
d=$(newcase cut_header)
printf 'time_s,rank,pi' >"$d/rank-0.csv"
give "$d"
refused cut_header 1 "$d/rank-0.csv:1: header line is cut short" "$d" "$d"
d=$(newcase cut_row)
good_rank "$d/rank-0.csv" 0
sed -i '3s/,app,.*/,ap/' "$d/rank-0.csv"
give "$d"
refused cut_row 1 "$d/rank-0.csv:3: 4 fields, the header has 6" "$d" "$d"
d=$(newcase empty_file)
good_rank "$d/rank-0.csv" 0
: >"$d/rank-1.csv"
give "$d"
refused empty_file 1 "$d/rank-1.csv:1: empty file" "$d" "$d"

# 3. Bad numbers, in a rank file and in the summary.
d=$(newcase bad_number)
good_rank "$d/rank-0.csv" 0
good_rank "$d/rank-1.csv" 1
sed -i '4s/5000/5e3x/' "$d/rank-1.csv"
give "$d"
refused bad_number 1 "$d/rank-1.csv:4: bad value '5e3x' in column rss_bytes" "$d" "$d"
d=$(newcase bad_time)
good_rank "$d/rank-0.csv" 0
sed -i '2s/^0.100/nan/' "$d/rank-0.csv"
give "$d"
refused bad_time 1 "$d/rank-0.csv:2: bad value 'nan' in column time_s" "$d" "$d"

# 4. Another tool's CSVs under our names.
d=$(newcase foreign)
printf 'timestamp,pid,vmrss_kb,vmhwm_kb\n1700000000.1,4242,10240,10240\n' >"$d/rank-0.csv"
give "$d"
refused foreign 1 "$d/rank-0.csv:1: not a memattr-bpf timeline \\(no column 'time_s'" "$d" "$d"
d=$(newcase foreign_summary)
good_rank "$d/rank-0.csv" 0
printf 'host,metric,value\nn1,mem,3\n' >"$d/summary.csv"
give "$d"
refused foreign_summary 1 "$d/summary.csv:1: not a memattr-bpf summary" "$d" "$d"
d=$(newcase foreign_calls)
good_rank "$d/rank-0.csv" 0
printf 'function,count\nMPI_Init,1\n' >"$d/mpi_calls.csv"
give "$d"
refused foreign_calls 1 "$d/mpi_calls.csv:1: not a memattr-bpf MPI call table" "$d" "$d"

# 5. An input that is a symlink is not followed.
d=$(newcase symlink_input)
good_rank "$TMPD/elsewhere.csv" 0
ln -s "$TMPD/elsewhere.csv" "$d/rank-0.csv"
give "$d" "$TMPD/elsewhere.csv"
refused symlink_input 1 "$d/rank-0.csv: cannot open: is a symlink" "$d" "$d"

# 6. The directory: missing, a file, not writable; usage errors.
refused no_dir 1 "$CASES/nope: No such file or directory" "$CASES/nope" "$CASES/nope"
refused file_dir 1 "not a directory" "$CASES" "$TMPD/elsewhere.csv"
d=$(newcase readonly)
good_rank "$d/rank-0.csv" 0
give "$d"
chmod 0550 "$d"
refused readonly 1 "$d/report.html: cannot write: Permission denied" "$d" "$d"
refused no_args 2 "usage: memattr-bpf report DIR" "$CASES"
refused option_arg 2 "usage: memattr-bpf report DIR" "$CASES" "$CASES" --all
# More directories ask for the memory model: one that cannot be fitted writes no page.
refused two_runs 1 "the model of 2 runs: 2 runs given: a model in P needs at least 3" "$CASES" "$CASES" "$CASES"
refused model_not_runs 1 "the model of 3 runs: .*$CASES" "$CASES" "$CASES" "$CASES" "$CASES"

# 7. A planted report.html symlink is replaced, its target untouched.
d=$(newcase planted)
good_rank "$d/rank-0.csv" 0
printf 'precious\n' >"$TMPD/victim"
ln -s "$TMPD/victim" "$d/report.html"
give "$d" "$TMPD/victim"
as_user "$TMPD/bin/memattr-bpf" report "$d" >/dev/null 2>"$TMPD/planted.err" ||
	fail "planted: report of a good run failed: $(cat "$TMPD/planted.err")"
[ -L "$d/report.html" ] && fail "planted: report.html is still the symlink"
[ -f "$d/report.html" ] || fail "planted: no report.html"
assert_eq "$(cat "$TMPD/victim")" precious "planted: the symlink's target"
assert_eq "$(stat -c %a "$d/report.html")" 640 "planted: mode of report.html"
log "planted symlink replaced, target untouched"
pass
