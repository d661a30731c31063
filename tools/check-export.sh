#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# memattr-bpf export's files read back by readers that are not ours: the
# pprof profile by Go's pprof (`go tool pprof`, Debian's golang-go), the
# speedscope file by Python's json module, on the unit tests' synthetic
# run whose every number is known (tests/unit/fixtures/export/run). No
# root; `make export-check`.
# Usage: tools/check-export.sh [BINARY]
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$top/memattr-bpf}
run=$top/tests/unit/fixtures/export/run
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

command -v go >/dev/null || { echo "check-export: no go (apt-get install golang-go)"; exit 1; }
export GOCACHE=$tmp/gocache GOPATH=$tmp/gopath HOME=$tmp

# want WHAT GOT EXPECTED
want() {
	if [ "$2" = "$3" ]; then echo "check-export: $1: $2"; else
		echo "check-export: $1: got '$2', want '$3'"; fail=1; fi
}

"$bin" export "$run" --at end --format pprof -o "$tmp/run.pb.gz"

# Sum of one sample type over the samples -tagfocus keeps, from pprof's -raw listing.
total() {
	local idx=$1; shift
	go tool pprof -raw "$@" "$tmp/run.pb.gz" 2>/dev/null |
		awk -v i="$idx" '/^Samples:/ { on = 1; getline; next }
			/^Locations/ { on = 0 }
			on && /:/ && $1 ~ /^[0-9]+$/ { s += $i } END { print s + 0 }'
}

# Each rank's resident stacks are its VmRSS at its last sample (20000, 12000 bytes).
want "rank 0 resident_space" "$(total 1 -tagfocus='rank=^0$')" 20000
want "rank 1 resident_space" "$(total 1 -tagfocus='rank=^1$')" 12000
want "all proportional_space" "$(total 2)" 16000
want "rank 0 inuse_space" "$(total 3 -tagfocus='rank=^0$')" 7680
# MPI_Init's own bytes on rank 0 (mpi_calls.csv's net_bytes), by pprof's -top.
want "rank 0 MPI_Init flat" "$(go tool pprof -top -tagfocus='rank=^0$' "$tmp/run.pb.gz" 2>/dev/null |
	awk '$NF == "MPI_Init" { print $1 }')" 6000B
want "mpi cum (both ranks)" "$(go tool pprof -top -unit=B "$tmp/run.pb.gz" 2>/dev/null |
	awk '$NF == "mpi" { print $4 }')" 18000B
want "mapping of MPI_Alloc_mem" "$(go tool pprof -raw "$tmp/run.pb.gz" 2>/dev/null |
	awk '/MPI_Alloc_mem/ && /M=/ { sub(/M=/, "", $3); print $3 }')" 2
want "default sample type" "$(go tool pprof -raw "$tmp/run.pb.gz" 2>/dev/null | grep -o '[a-z_]*/bytes\[dflt\]')" \
	"resident_space/bytes[dflt]"

# Allocation stacks (alloc_stacks.csv): build_mesh's bytes on both ranks
# (5000 + 4000 scaled), each frame in its file's mapping.
"$bin" export "$run/../stacks" --at end --format pprof -o "$tmp/stacks.pb.gz"
want "build_mesh flat (stacks)" "$(go tool pprof -top -unit=B "$tmp/stacks.pb.gz" 2>/dev/null |
	awk '$NF == "build_mesh" { print $1 }')" 9000B
want "mapping of helper_alloc" "$(go tool pprof -raw "$tmp/stacks.pb.gz" 2>/dev/null |
	awk '/^Mappings/ { on = 1; next } on' | grep -c 'libhelper.so')" 1
# Each file's GNU build ID (alloc_stacks.csv's build_ids) on its mapping.
want "build ID of libhelper.so" "$(go tool pprof -raw "$tmp/stacks.pb.gz" 2>/dev/null |
	awk '/^Mappings/ { on = 1; next } on && $3 == "libhelper.so" { print $4 }')" \
	4e1b00000000000000000000000000000000bb01

# diff's pprof pair, read with pprof's -base: B's MPI_Alloc_mem less A's
# (fixtures/export/grown holds 16384 bytes more on rank 0).
"$bin" diff "$run" "$run/../grown" -o "$tmp/cmp" >/dev/null
want "diff -base MPI_Alloc_mem" "$(go tool pprof -top -unit=B -base "$tmp/cmp/a-end.pb.gz" \
	"$tmp/cmp/b-end.pb.gz" 2>/dev/null | awk '$NF == "MPI_Alloc_mem" { print $1 }')" 16384B

"$bin" export "$run" --format speedscope -o "$tmp/run.json"
want "speedscope" "$(python3 - "$tmp/run.json" <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))
frames = f["shared"]["frames"]
out = []
for p in f["profiles"]:
    assert p["type"] == "sampled" and p["unit"] == "bytes"
    assert len(p["samples"]) == len(p["weights"])
    assert sum(p["weights"]) == p["endValue"]
    out.append("%s=%d" % ("+".join(frames[s[-1]]["name"] for s in p["samples"]), p["endValue"]))
print(" ".join(out))
PY
)" "app+mpi+libc=30000 app+mpi=12000"

[ $fail = 0 ] && echo "check-export: the pprof and speedscope files read back as written"
exit $fail
