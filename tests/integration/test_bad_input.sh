#!/bin/bash
# Bad input must be refused cleanly: for each case a non-zero exit (2 for a
# malformed command line), exactly one line on stderr starting with
# "memattr-bpf: ", no output directory left behind, no ma_* BPF program
# or link loaded afterwards, and (run as root, under strace) not one bpf()
# call made: every argument is checked before BPF is loaded, not refused
# once probes are attached. Every case runs even when an earlier one failed,
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
	local tracer=() trace=$TMPD/strace-$name
	# strace as root only: the not-root case must run without privileges.
	[ ${#runner[@]} -eq 0 ] && [ -n "$STRACE" ] && tracer=("$STRACE" -f -qq -e trace=bpf -o "$trace")
	(cd "$cwd" && timeout -s KILL 30 "${runner[@]}" "${tracer[@]}" "$MEMATTR_BIN" "$@") >"$TMPD/out-$name" 2>"$err" || rc=$?
	if [ ${#tracer[@]} -gt 0 ] && grep -q 'bpf(' "$trace"; then
		bad "$name: refused only after $(grep -c 'bpf(' "$trace") bpf() call(s): arguments must be checked before BPF is loaded"
	fi
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

# MEMATTR_STRACE= (empty) turns the check off: LeakSanitizer cannot run
# under ptrace, so a sanitized build is tried without it.
STRACE=${MEMATTR_STRACE-$(command -v strace || true)}
[ -n "$STRACE" ] || log "no strace (tools/install-deps.sh installs it, or MEMATTR_STRACE is empty): the no-bpf()-before-refusal check is skipped"

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

# One number syntax for every option (decimal digits only, nothing around
# them): `--duration 0x10` used to run 16 s while `--interval 0x10` was
# refused, and a leading space passed everywhere.
try duration-hex 2 "$TMPD/o-dhex" -- --pid "$SLEEP_PID" --duration 0x10 --output "$TMPD/o-dhex"
try duration-exponent 2 "$TMPD/o-dexp" -- --pid "$SLEEP_PID" --duration 1e1 --output "$TMPD/o-dexp"
try interval-space 2 "$TMPD/o-isp" -- --pid "$SLEEP_PID" --interval " 50" --output "$TMPD/o-isp" --duration 1
try ringbuf-hex 2 "$TMPD/o-rb" -- --pid "$SLEEP_PID" --ringbuf-mb 0x8 --output "$TMPD/o-rb" --duration 1
# A kernel thread has no user memory: kthreadd (pid 2) used to trace every
# kernel thread into all-zero files. Refused, naming it.
if [ "$(cat /proc/2/comm 2>/dev/null)" = kthreadd ]; then
	try pid-kernel-thread 1 "$TMPD/o-kth" -- --pid 2 --output "$TMPD/o-kth" --duration 1
	grep -q "kernel thread" "$LAST_ERR" || bad "pid-kernel-thread: the error does not say 'kernel thread': $(cat "$LAST_ERR")"
	try job-kernel-thread 1 "$TMPD/o-kjob" -- --job 2 --output "$TMPD/o-kjob" --duration 1
else
	log "pid 2 is not kthreadd here (a pid namespace?): kernel-thread cases skipped"
fi
# Output paths mkdir or the directory open would refuse, refused before BPF:
# a name longer than NAME_MAX, and a symlink to a directory written "link/".
LONG=$TMPD/$(printf 'o%.0s' $(seq 300))
try output-name-too-long 1 - -- --pid "$SLEEP_PID" --output "$LONG" --duration 1
grep -q "File name too long" "$LAST_ERR" || bad "output-name-too-long: no 'File name too long': $(cat "$LAST_ERR")"
install -d -m 755 "$TMPD/real-out"
ln -s "$TMPD/real-out" "$TMPD/link-out"
try output-symlink-slash 1 - -- --pid "$SLEEP_PID" --output "$TMPD/link-out/" --duration 1
[ -z "$(ls -A "$TMPD/real-out")" ] || bad "output-symlink-slash: files written through the symlink: $(ls -A "$TMPD/real-out")"

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
