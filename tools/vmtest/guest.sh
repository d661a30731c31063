#!/bin/bash
# Runs inside each VM of tools/kernel-matrix.sh, as root, on the host's
# root file system (read-only; /tmp, /run and /dev/shm are the VM's own).
set -uo pipefail
cd "$(dirname "$0")/../.."
echo "guest: $(uname -r), $(nproc) CPUs"
ls -la /sys/kernel/btf/vmlinux
./memattr-bpf --verbose --output /tmp/out -- /bin/true 2>&1 | tail -40
