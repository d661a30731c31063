#!/bin/bash
# CI's arm64 check, as root on Debian 12 x86-64: the arm64 packages the
# cross-build links (dpkg --add-architecture arm64), then the tool, its
# BPF object and its unit tests built for arm64 (make ARCH=arm64 cross,
# build-arm64/), and the unit tests run under qemu-user. What this does not
# test on arm64: docs/operations.md, "arm64". Then the tool on Debian's arm64 6.1
# kernel under qemu-system-aarch64 (tools/arm64/vm-load.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."

ARM64_PACKAGES=(libbpf-dev:arm64 libelf-dev:arm64 libdw-dev:arm64 zlib1g-dev:arm64 libcmocka-dev:arm64
	libprotobuf-c-dev:arm64)
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
	dpkg --add-architecture arm64
	apt-get update -qq
fi
missing=()
for p in "${ARM64_PACKAGES[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	# The arm64 lists may be older than the machine's: refresh them once.
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" ||
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"; }
fi
tools/install-deps.sh gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user qemu-system-arm cpio >/dev/null
make ARCH=arm64 -j2 cross
tools/arm64/unit-tests.sh
# The BPF object loaded and a program traced on Debian 12's arm64 kernel (qemu-system-aarch64).
tools/arm64/vm-load.sh 6.1
echo "arm64: the tool, its BPF object and the unit tests build; the unit tests pass under qemu-user;"
echo "arm64: the tool loads and traces on Debian's arm64 6.1 kernel"
