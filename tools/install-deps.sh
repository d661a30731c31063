#!/bin/bash
# Install what memattr-bpf needs to build, test and demo on Debian 12, as
# root, and any further packages named as arguments (tools/bench adds its
# own). Idempotent: when every package is already installed it touches
# nothing (no apt-get update), so it is cheap to call from every script.
set -euo pipefail

PACKAGES=(
	make gcc libc6-dev clang llvm pkg-config	# build (clang: the BPF object)
	libbpf-dev bpftool libelf-dev libdw-dev zlib1g-dev	# BPF loader, unwinding
	libprotobuf-c-dev protobuf-c-compiler		# export --format pprof: profile.proto's messages
	libcmocka-dev					# unit tests
	libclang-rt-14-dev				# libFuzzer and sanitizer runtimes (make fuzz)
	libopenmpi-dev openmpi-bin			# workloads (mpicc) and mpirun
	libmpich-dev mpich				# the same under MPICH (mpicc.mpich, mpirun.mpich)
	openssh-client					# Open MPI's launcher looks for an rsh agent
	python3						# integration test checkers (stdlib only)
	chromium					# report test: renders report.html headless
	procps util-linux coreutils passwd		# ps, runuser, timeout/env, useradd
	strace						# bad-input test: refusals come before any bpf() call
	prometheus prometheus-node-exporter curl	# node service tests: a real scraper, the textfile collector
	slurmctld slurmd slurm-client munge		# Slurm tests: a real controller and node daemon on loopback
	slurm-wlm-basic-plugins libslurm-dev libpmix-dev	# srun --mpi=pmix for Open MPI; SPANK headers
	man-db groff-base				# make man-check: the man pages render without warnings
	golang-go					# make export-check: Go's own pprof reads our profiles back
)

PACKAGES+=("$@")

die() { echo "install-deps.sh: $*" >&2; exit 1; }

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
	echo "install-deps.sh: all ${#PACKAGES[@]} packages already installed"
	exit 0
fi
echo "install-deps.sh: installing ${todo[*]}"

# Update the package lists only when there are none (a fresh machine) or the
# install fails on stale ones.
lists_present() { compgen -G '/var/lib/apt/lists/*_Packages' >/dev/null; }
if ! lists_present; then
	apt-get update -q
fi
if ! apt-get install -y -q --no-install-recommends "${todo[@]}"; then
	apt-get update -q
	apt-get install -y -q --no-install-recommends "${todo[@]}"
fi

mapfile -t todo < <(missing)
[ ${#todo[@]} -eq 0 ] || die "still missing after install: ${todo[*]}"
echo "install-deps.sh: done"
