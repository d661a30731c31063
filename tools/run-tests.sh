#!/bin/bash
# Everything CI runs: dependencies, build, unit tests, integration tests.
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
make test
