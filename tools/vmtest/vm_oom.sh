#!/bin/bash
# Inside a VM of the kernel matrix: the OOM post-mortem on cgroup v2 (the
# VM's init mounts no cgroup: mounted here, v2 only, as most sites run it),
# tests/integration/test_oom_postmortem*.sh as on the host. The rank is
# started through setpriv, which execs in place: the victim must be named
# by its rank on every kernel (6.1 once named it by its pid).
# Runs under tools/vmtest/guest.sh, or alone as the VM's script
# (MATRIX_SCRIPT=tools/vmtest/vm_oom.sh tools/kernel-matrix.sh 6.1).
set -uo pipefail
cd "$(dirname "$0")/../.."
mounted=
if ! grep -q ' /sys/fs/cgroup cgroup2 ' /proc/mounts; then
	mount -t cgroup2 cgroup2 /sys/fs/cgroup || { echo "vm_oom: cannot mount cgroup2 on /sys/fs/cgroup"; exit 1; }
	mounted=1
fi
# The next check of guest.sh finds the VM as it was.
trap '[ -z "$mounted" ] || umount /sys/fs/cgroup 2>/dev/null' EXIT
grep -qw memory /sys/fs/cgroup/cgroup.controllers || { echo "vm_oom: no memory controller in cgroup2"; exit 1; }
rc=0
for t in tests/integration/test_oom_postmortem*.sh; do
	bash "$t" || { rc=1; cp -a /tmp/memattr-it.* /run/results/ 2>/dev/null; }
done
exit $rc
