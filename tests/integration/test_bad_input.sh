#!/bin/bash
# Bad input must be refused cleanly: for each case a non-zero exit (2 for a
# malformed command line), exactly one line on stderr starting with
# "memattr-bpf: ", no output directory left behind, and no ma_* BPF program
# or link loaded afterwards. Every case runs even when an earlier one failed,
# so one run shows all that is wrong.
source "$(dirname "$0")/lib.sh"

FAILED=0
bad() {
	printf 'FAIL: %s: %s\n' "$TEST_NAME" "$*"
	FAILED=$((FAILED + 1))
}

# A pid that is not in use now (nor likely soon: pids are handed out upward
# from the last one, and this is near the top).
free_pid() {
	local max p
	max=$(cat /proc/sys/kernel/pid_max)
	for ((p = max - 1; p > max - 1000; p--)); do
		[ -e "/proc/$p" ] || { echo "$p"; return; }
	done
	fail "no free pid found"
}

# try NAME EXPECTED_RC(any|2|1) OUTPUT_PATH_OR_- [--as-user] -- ARGS...
# OUTPUT_PATH must not exist afterwards (unless it existed before, as a file
# that must be left as it was). The command runs in an empty directory that
# must stay empty (the default ./memattr-<id> must not appear either).
try() {
	local name=$1 want=$2 out=$3
	shift 3
	local runner=()
	if [ "$1" = --as-user ]; then
		runner=("${AS_USER[@]}")
		shift
	fi
	shift	# --
	local cwd=$TMPD/cwd-$name err=$TMPD/err-$name rc=0 before=""
	install -d -o "$TEST_USER" -m 755 "$cwd"
	[ "$out" != - ] && [ -f "$out" ] && before=$(sha256sum <"$out")
	(cd "$cwd" && timeout -s KILL 30 "${runner[@]}" "$MEMATTR_BIN" "$@") >"$TMPD/out-$name" 2>"$err" || rc=$?
	LAST_ERR=$err
	local nlines first
	nlines=$(wc -l <"$err")
	first=$(head -n 1 "$err")
	log "$name: exit $rc, stderr: $(head -c 300 "$err" | tr '\n' '|')"
	if [ "$rc" -eq 0 ]; then
		bad "$name: exit status 0, expected failure"
	elif [ "$rc" -eq 137 ]; then
		bad "$name: still running after 30 s (killed)"
	elif [ "$want" != any ] && [ "$rc" -ne "$want" ]; then
		bad "$name: exit status $rc, expected $want"
	fi
	if [ "$nlines" -ne 1 ] || [ "$(tail -c 1 "$err" | od -An -c | tr -d ' ')" != '\n' ]; then
		bad "$name: stderr has $nlines line(s), expected exactly one: $(head -c 500 "$err")"
	fi
	case $first in
	"memattr-bpf: "*) ;;
	*) bad "$name: stderr does not start with 'memattr-bpf: ': $first" ;;
	esac
	if [ -n "$(ls -A "$cwd")" ]; then
		bad "$name: left files in its working directory: $(ls -A "$cwd")"
	fi
	if [ "$out" != - ]; then
		if [ -n "$before" ]; then
			[ -f "$out" ] && [ "$(sha256sum <"$out")" = "$before" ] ||
				bad "$name: the existing file $out was changed or replaced"
		elif [ -e "$out" ]; then
			bad "$name: output path $out was created"
		fi
	fi
	if ! "$PY" "$IT_DIR/bpf_leftovers.py"; then
		bad "$name: BPF programs/links named ma_* loaded after the tool exited"
	fi
}

it_setup
# Targets that exist, so each case has exactly one thing wrong with it.
as_user sleep 300 &
SLEEP_RUNUSER=$!
track_pid "$SLEEP_RUNUSER"
SLEEP_PID=$(find_descendant "$SLEEP_RUNUSER" sleep 10) || fail "cannot start a sleep as $TEST_USER"
track_pid "$SLEEP_PID"
NOPID=$(free_pid)

try unknown-flag 2 - -- --no-such-flag --pid "$SLEEP_PID"
try pid-not-a-number 2 - -- --pid abc
try pid-nonexistent any "$TMPD/o-nopid" -- --pid "$NOPID" --output "$TMPD/o-nopid" --duration 1
try job-unknown any "$TMPD/o-nojob" -- --job nosuchjob-123 --output "$TMPD/o-nojob" --duration 1
try interval-negative 2 "$TMPD/o-ineg" -- --pid "$SLEEP_PID" --interval -5 --output "$TMPD/o-ineg" --duration 1
try interval-zero 2 "$TMPD/o-izero" -- --pid "$SLEEP_PID" --interval 0 --output "$TMPD/o-izero" --duration 1

echo "not a directory" >"$TMPD/a-file"
try output-is-file any "$TMPD/a-file" -- --pid "$SLEEP_PID" --output "$TMPD/a-file" --duration 1
try output-parent-missing any "$TMPD/no/such/parent/out" -- \
	--pid "$SLEEP_PID" --output "$TMPD/no/such/parent/out" --duration 1
# Root may write anywhere on a normal file system; /proc refuses even root.
try output-parent-unwritable any /proc/memattr-test-out -- \
	--pid "$SLEEP_PID" --output /proc/memattr-test-out --duration 1

SPEC=$TMPD/bad.spec
printf '# a spec with one bad line\ncomponent mpi\nthis-is-not-a-statement at all\nlibrary libfoo.so\n' >"$SPEC"
try spec-bad-line any "$TMPD/o-spec" -- --pid "$SLEEP_PID" --spec "$SPEC" --output "$TMPD/o-spec" --duration 1
grep -q "$SPEC:3" "$LAST_ERR" || bad "spec-bad-line: the error does not name $SPEC:3: $(cat "$LAST_ERR")"

# The tool's binary may live where the test user cannot reach it (e.g. the
# repo under /root): the capability check is what is tested, not the path.
if ! as_user test -x "$MEMATTR_BIN"; then
	cp "$MEMATTR_BIN" "$TMPD/bin/memattr-bpf"
	chmod 755 "$TMPD/bin/memattr-bpf"
	MEMATTR_BIN=$TMPD/bin/memattr-bpf
fi
USER_OUT=$TMPD/cwd-not-root/out
try not-root any "$USER_OUT" --as-user -- --pid "$SLEEP_PID" --output "$USER_OUT" --duration 1
grep -Eq 'CAP_[A-Z_]+' "$LAST_ERR" || bad "not-root: the error names no capability (CAP_BPF, CAP_SYS_ADMIN, ...): $(cat "$LAST_ERR")"

[ "$FAILED" -eq 0 ] || fail "$FAILED check(s) failed"
pass
