#!/bin/bash
# Inside a VM of the kernel matrix (not one of its checks: run it with
# MATRIX_SCRIPT=tools/vmtest/cost_syscalls.sh tools/kernel-matrix.sh 6.12):
# what a process the node service does not trace pays on its syscalls while
# the service traces a job, by the way the memory calls are reached.
# Variants, interleaved ROUNDS times: none (no daemon), fentry (the
# daemon's default where the kernel allows it) and tracepoints
# (MEMATTR_SYSCALL_HOOKS=tracepoints); in each, the test user's sleep with
# a job ID is traced and an untraced getppid loop (tools/bench sysloop)
# runs SECS seconds. Prints "COST <variant> <round> <ns per call>", the
# daemon's start time ("START ..."), and a median per variant. Under TCG (no KVM) the figures are only relative.
source "$(dirname "$0")/../../tests/integration/lib.sh"
source "$IT_DIR/daemon_lib.sh"

ROUNDS=${COST_ROUNDS:-3}
SECS=${COST_SECS:-5}
SYSLOOP=$REPO/build/bench/sysloop
[ -x "$SYSLOOP" ] || fail "no $SYSLOOP (make -C tools/bench/workloads OUT=\$PWD/build/bench on the host)"
it_setup
cp "$SYSLOOP" "$TMPD/bin/" && chmod 755 "$TMPD/bin/sysloop"
SYSLOOP=$TMPD/bin/sysloop
DAEMON_ERR=$TMPD/daemon.err
until_line() {	# REGEX TIMEOUT (the VM's start takes 10-40 s: the verifier)
	wait_daemon_line "$1" "$2" || fail "no line '$1' after $2 s: $(tail -5 "$DAEMON_ERR")"
}

# run_variant VARIANT ROUND
run_variant() {
	local v=$1 r=$2 job ns n
	DAEMON_PID=""
	if [ "$v" != none ]; then
		: >"$DAEMON_ERR"
		MEMATTR_SYSCALL_HOOKS=$([ "$v" = tracepoints ] && echo tracepoints || echo auto) \
			"$MEMATTR_BIN" daemon --spool "$TMPD/spool" --listen none --socket none \
			--detach-after never 2>"$DAEMON_ERR" &
		DAEMON_PID=$!
		track_pid "$DAEMON_PID"
		local t0=$EPOCHREALTIME
		until_line '^memattr-bpf: daemon: watching' 300
		# The start is mostly the verifier's: one pair of programs, or 22 fentry/fexit ones.
		echo "START $v $r $(seconds_since "$t0") s"
		job=$((500000 + RANDOM))
		as_user SLURM_JOB_ID="$job" sleep 600 &
		track_pid $!
		J=$(find_descendant $! sleep 10) || fail "the job's sleep did not start"
		track_pid "$J"
		until_line "job $job of " 120
		n="$(syscall_tps "$DAEMON_PID") $(fentry_links "$DAEMON_PID")"
		# What the verifier walked for the memory calls' programs (the start's difference).
		[ "$r" != 1 ] || bpftool -j prog show | "$PY" -c 'import json, os, re, sys
names = {p["id"]: p.get("name", "") for p in json.load(sys.stdin)}
n = k = 0
d = f"/proc/{sys.argv[2]}/fdinfo"
for fd in os.listdir(d):
    info = dict(l.split(":", 1) for l in open(f"{d}/{fd}") if ":" in l)
    if "verified_insns" in info and re.match(r"ma_(sys_e|f[ex]_)", names.get(int(info.get("prog_id", -1)), "")):
        k += 1
        n += int(info.get("verified_insns", 0))
print(f"VERIFIED {sys.argv[1]}: {k} programs of the memory calls, {n} instructions verified")' "$v" "$DAEMON_PID"

		case $v in
		fentry) [ "$n" = "0 22" ] || fail "fentry variant: $n syscall tracepoints and fentry links" ;;
		tracepoints) [ "$n" = "22 0" ] || fail "tracepoints variant: $n syscall tracepoints and fentry links" ;;
		esac
	fi
	ns=$(as_user "$SYSLOOP" --seconds "$SECS" | awk '$1 == "RESULT" { print $3 }')
	[ -n "$ns" ] || fail "sysloop gave no result"
	echo "COST $v $r $ns"
	echo "$v $ns" >>"$TMPD/costs"
	if [ -n "$DAEMON_PID" ]; then
		kill "$J" 2>/dev/null || true
		kill -TERM "$DAEMON_PID"
		wait_exit "$DAEMON_PID" 120 || fail "the daemon did not stop"
		check_no_bpf_leftovers
	fi
}

echo "cost: Linux $(uname -r), $(nproc) CPUs, $ROUNDS rounds of $SECS s"
for r in $(seq "$ROUNDS"); do
	for v in none fentry tracepoints; do
		run_variant "$v" "$r"
	done
done
"$PY" - "$TMPD/costs" <<'EOF'
import statistics, sys
by = {}
for line in open(sys.argv[1]):
    v, ns = line.split()
    by.setdefault(v, []).append(float(ns))
base = statistics.median(by["none"])
for v in ("none", "fentry", "tracepoints"):
    xs = by[v]
    m = statistics.median(xs)
    print(f"COST-MEDIAN {v}: {m:.1f} ns per getppid (range {min(xs):.1f}-{max(xs):.1f}), "
          f"{m / base:.3f}x of none")
EOF
pass
