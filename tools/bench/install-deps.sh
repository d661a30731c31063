#!/bin/bash
# Packages only the benchmarks need (the peers they compare against and the
# helpers they measure with), on Debian 12, as root. The build and test
# packages are tools/install-deps.sh's. Idempotent: installs only what is
# missing, and updates the package lists only when it has to.
set -euo pipefail

PACKAGES=(
	heaptrack		# peer: LD_PRELOAD heap profiler
	valgrind		# peer: valgrind --tool=massif
	bpftrace		# peer: the memleak method as a bpftrace script
	bpftool			# BPF map memory of the tool (also a build package)
	time			# /usr/bin/time: CPU time and max RSS of the tool
	python3			# post-processing (standard library only)
)

die() { echo "tools/bench/install-deps.sh: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "must run as root (it uses apt-get)"
command -v apt-get >/dev/null || die "apt-get not found: this script is for Debian"
export DEBIAN_FRONTEND=noninteractive

missing() {
	local p
	for p in "${PACKAGES[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || echo "$p"
	done
}

mapfile -t todo < <(missing)
if [ ${#todo[@]} -eq 0 ]; then
	echo "tools/bench/install-deps.sh: all ${#PACKAGES[@]} packages already installed"
	exit 0
fi
echo "tools/bench/install-deps.sh: installing ${todo[*]}"
if ! compgen -G '/var/lib/apt/lists/*_Packages' >/dev/null; then
	apt-get update -q
fi
if ! apt-get install -y -q --no-install-recommends "${todo[@]}"; then
	apt-get update -q
	apt-get install -y -q --no-install-recommends "${todo[@]}"
fi
mapfile -t todo < <(missing)
[ ${#todo[@]} -eq 0 ] || die "still missing after install: ${todo[*]}"
echo "tools/bench/install-deps.sh: done"
