#!/bin/bash
# Packages only the benchmarks need, on Debian 12, as root, on top of the
# build and test packages: the same idempotent installer with more names.
set -euo pipefail
exec "$(dirname "$0")/../install-deps.sh" \
	heaptrack	`# peer: LD_PRELOAD heap profiler` \
	valgrind	`# peer: valgrind --tool=massif` \
	bpftrace	`# peer: the memleak method as a bpftrace script` \
	bpftool		`# BPF map memory of the tool` \
	time		`# /usr/bin/time: CPU time and max RSS of the tool` \
	python3		`# post-processing (standard library only)`
