#!/bin/bash
# The arm64 build's unit tests (make ARCH=arm64 cross), each run under
# qemu-user (qemu-aarch64). Four tests of test_procfs and one of test_proc_at
# read the process's own /proc entries, which under qemu-user describe the
# emulator (comm "qemu-aarch64", its maps) or are emulated by it
# (/proc/self/stat), not the program; test_page_runs' comparison wants the
# PAGEMAP_SCAN ioctl on a kernel that has it, which qemu-user does not pass
# on (ENOSYS: the code falls back to reading pagemap); test_remote_read's
# reads of its own child want process_vm_readv, which qemu-user does not
# implement (ENOSYS: the requester then reads each entry point alone, with
# pread). They must fail there, and only they; every other test must pass.
# One may also pass: test_proc_at's test_self compares the kernel's start
# time of the process with the one qemu-user's emulated /proc/self/stat
# gives, which qemu computes from its own clock at start: one or two ticks
# off, but the same tick about one run in ten.
set -uo pipefail
cd "$(dirname "$0")/../.."
qemu_fails() {
	case $1 in
	test_procfs) echo "test_query_code_self test_query_file_from test_read_self test_read_maps_self" ;;
	test_proc_at) echo "test_self" ;;
	test_page_runs) echo "test_scan_and_pread_agree" ;;
	test_remote_read) echo "test_reads_each_address test_stops_at_unreadable test_part_of_an_entry" ;;
	esac
}
qemu_may_pass() {
	case $1 in
	test_proc_at) echo "test_self" ;;
	esac
}
bad=0
for t in build-arm64/tests/test_*; do
	rc=0
	out=$(cd tests/unit && qemu-aarch64 -L / "../../$t" 2>&1) || rc=$?
	failed=$(echo "$out" | sed -n 's/^\[  FAILED  \] \([a-z_0-9]*\)$/\1/p' | sort -u | tr '\n' ' ')
	expect=$(qemu_fails "$(basename "$t")" | tr ' ' '\n' | sed '/^$/d' | sort -u | tr '\n' ' ')
	# A test that may pass and did: expected no more.
	for m in $(qemu_may_pass "$(basename "$t")"); do
		[[ " $failed" == *" $m "* ]] || expect=${expect/$m /}
	done
	if [ "$failed" != "$expect" ] || { [ $rc != 0 ] && [ -z "$expect" ]; }; then
		echo "$out"
		echo "arm64 unit: $(basename "$t"): exit $rc, failed [${failed}], expected [${expect}]"
		bad=1
	else
		echo "arm64 unit: $(basename "$t") ok${expect:+ (under qemu-user, as expected: $expect failed)}"
	fi
done
exit $bad
