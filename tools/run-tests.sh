#!/bin/bash
# Everything CI runs: dependencies, build, man pages and alert rules, unit
# tests, integration tests, the kernel matrix (docs/operations.md, "Kernels") and the arm64 build, then the
# hardening checks: the unit tests, fixture reports and one real
# 4-rank trace + report under ASan+UBSan, and every fuzzer for FUZZ_SECONDS
# (18 s each by default, 6 harnesses: about 2 minutes with their build).
# Must run as root: the integration tests load BPF programs and trace real
# Open MPI jobs run by an unprivileged test user.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -ne 0 ]; then
	echo "run-tests.sh: must run as root (the integration tests load BPF programs); try: sudo $0" >&2
	exit 1
fi

tools/install-deps.sh
make
make man-check rules-check	# man pages against the options; alert rules' unit tests, the dashboard's queries
make layers-check		# a wrong-way include fails to compile; no include or module cycle (docs/ARCHITECTURE.md)
make export-check		# export's pprof and speedscope files read back by Go's pprof and Python's json
make test
make report-memory-test	# report in bounded memory: 50 vs 200 MiB rank files
make model-export-memory-test	# model, export, diff: the same, outputs unchanged
tools/kernel-matrix.sh		# the same tree under Debian's 6.1 and 6.12 kernels (qemu)
tools/arm64/check.sh		# the arm64 cross-build and its unit tests (qemu-user)
tools/install-deps.sh dpkg-dev debhelper lintian >/dev/null
pkgdir=$(mktemp -d /tmp/memattr-pkg.XXXXXX)
tools/check-package.sh "$pkgdir"		# the Debian packages build, pass lintian and hold what they should
tools/check-package-install.sh "$pkgdir"	# installed by apt, the demo run from /usr/sbin, purged
make sanitize-test
tools/sanitize-test.sh trace build-san/memattr-bpf
make fuzz FUZZ_SECONDS="${FUZZ_SECONDS:-18}"
