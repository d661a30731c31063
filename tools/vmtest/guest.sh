#!/bin/bash
# Runs inside each VM of tools/kernel-matrix.sh, as root, on the host's
# root file system (read-only; /tmp, /run and /dev/shm are the VM's own):
# the unit tests, then the checks of tools/vmtest/vm_*.sh, each bounded.
# Exits non-zero when any failed.
set -uo pipefail
cd "$(dirname "$0")/../.."
echo "guest: Linux $(uname -r), $(nproc) CPUs"
failed=0
step() {	# name timeout command...
	local name=$1 secs=$2 start rc=0
	shift 2
	start=$EPOCHREALTIME
	timeout -k 5 "$secs" "$@" || rc=$?
	printf 'guest: %s %s (%.1f s)\n' "$([ $rc = 0 ] && echo PASS || echo "FAIL (exit $rc)")" "$name" \
		"$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }')"
	if [ $rc != 0 ]; then
		failed=1
		# What the failed test kept (lib.sh keeps its scratch directory), for the host.
		cp -a /tmp/memattr-it.* /run/results/ 2>/dev/null
	fi
}

# The unit tests test no kernel (pure logic, run on the host): here only
# when asked (MEMATTR_VM_UNIT=1 on the kernel's command line; 35-45 s).
if [ -z "${MEMATTR_VM_UNIT:-}" ]; then
	:
elif ls build/tests/test_* >/dev/null 2>&1; then
	step unit-tests 120 bash -c 'for t in build/tests/test_*; do
		(cd tests/unit && "../../$t" >/tmp/unit.log 2>&1) || { cat /tmp/unit.log; echo "unit: $t failed"; exit 1; }
	done'
else
	echo "guest: no unit tests built (make unit-test on the host first): skipped"
fi
for t in tools/vmtest/vm_*.sh; do
	step "$(basename "$t" .sh)" 600 bash "$t"
done
exit $failed
