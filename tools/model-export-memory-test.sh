#!/bin/bash
# `model`, `export` and `diff` (which reads as export does) in bounded
# memory (issue 32, finding 12), as tools/report-memory-test.sh checks
# `report`: each reads a run whose rank file is hundreds of MiB in a peak
# RSS that stays what it is on the small run and far under the file, and
# writes, byte for byte, what it writes for the small run.
#
# The small runs are synthetic (tools/bench/synth_job.c: 1, 2, 4 and 8
# ranks, 2,000 samples each, no summary.csv, so that model reads the
# timelines). The large set is the same but rank 0 of the 8-rank run: each
# of its samples is followed by ~600 smaller ones before the next. Every
# figure the commands show (each component's peak rss and pss, the first
# sample of the largest total, the last sample, the last sample at or
# before a time the small run has) is then the small run's, while the file
# is ~600 times longer and the reader must thin it to stay bounded.
#
# Mutations checked to make it fail: ex_load without
# `d->run.max_samples = RP_PROC_SAMPLES` (export and diff hold the whole
# file: memory); the same in model_read.c's from_timelines (model: memory);
# ex_load not setting run.keep_at for --at TIME (the export at that time
# shows an earlier sample: output differs). diff's peaks over every sample
# of a thinned timeline are test_diff.c's test_thinned (here they fall on
# kept samples).
#   tools/model-export-memory-test.sh [BIN]    (default ./memattr-bpf; no root)
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=$(realpath "${1:-./memattr-bpf}")
tmp=$(mktemp -d /tmp/memattr-mexmem.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "model-export-memory: FAILED: $*"; exit 1; }

gcc -O2 -o "$tmp/synth_job" tools/bench/synth_job.c -lm
mkdir "$tmp/small"
for r in 1 2 4 8; do
	"$tmp/synth_job" --nodes 1 --ranks-per-node $r --samples 2000 -o "$tmp/gen$r" >/dev/null
	mv "$tmp/gen$r/node0000" "$tmp/small/r$r"
	rm -f "$tmp/small/r$r/summary.csv"
done
cp -a "$tmp/small" "$tmp/large"

# Rank 0 of r8, each sample followed by FILL samples 0.1 ms apart (the
# synthetic samples are 1 s apart: they end long before the next one),
# each the rank's peak sample scaled by 5..95%: below every figure the
# commands show, but spread enough that thinning drops most samples, the
# small run's ones included (one 95% and one 5% filler outdo them in most
# slices of time).
python3 - "$tmp/small/r8/rank-0.csv" "$tmp/large/r8/rank-0.csv" <<'PY'
import sys
FILL = 580
src, dst = sys.argv[1], sys.argv[2]
with open(src) as f:
    header = f.readline()
    samples, cur, t = [], [], None
    for line in f:
        fld = line.rstrip("\n").split(",")
        if cur and fld[0] != t:
            samples.append((t, cur))
            cur = []
        t = fld[0]
        cur.append(fld)
    samples.append((t, cur))
peak = max(samples, key=lambda s: int(s[1][0][4]))[1]    # the first of the largest totals
assert all(r[3] == "total" for _, (r, *_) in samples)
fillers = []
for j in range(FILL):
    scale = 0.05 + 0.9 * ((j * 7919) % 1000) / 1000
    comps = [(r[1], r[2], r[3], int(int(r[4]) * scale), int(int(r[5]) * scale)) for r in peak[1:]]
    total = (peak[0][1], peak[0][2], "total", sum(c[3] for c in comps), int(int(peak[0][5]) * scale))
    fillers.append(["," + ",".join(map(str, row)) + "\n" for row in [total] + comps])
with open(dst, "w") as out:
    out.write(header)
    for i, (t, rows) in enumerate(samples):
        out.write("".join(",".join(r) + "\n" for r in rows))
        if i + 1 == len(samples):
            break
        base = float(t)
        out.write("".join("".join("%.4f%s" % (base + (j + 1) * 1e-4, r) for r in fillers[j])
                          for j in range(FILL)))
PY
large_mib=$(( $(stat -c %s "$tmp/large/r8/rank-0.csv") >> 20 ))
[ "$large_mib" -ge 256 ] || fail "the large rank file is only $large_mib MiB"
# A moment of the small run (a sample's time): in the large run, thinned,
# that sample is kept only because export asks for it.
at=123.1

# run SET NAME CMD...: CMD's stdout in $tmp/out/SET/NAME, its peak RSS (KiB) in $tmp/out/SET/NAME.rss.
run() {
	local set=$1 name=$2
	shift 2
	mkdir -p "$tmp/out/$set"
	(cd "$tmp/$set" && python3 - "$tmp/out/$set/$name" "$@" <<'PY'
import resource, subprocess, sys
out = sys.argv[1]
with open(out, "wb") as f:
    r = subprocess.run(sys.argv[2:], stdout=f, stderr=subprocess.PIPE)
if r.returncode != 0:
    sys.exit("%s: exit %d: %s" % (" ".join(sys.argv[2:]), r.returncode,
                                  r.stderr.decode(errors="replace").strip()))
with open(out + ".rss", "w") as f:
    f.write("%d\n" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
PY
	) || fail "$set: $name"
}

for set in small large; do
	run $set model "$BIN" model r1 r2 r4 r8 --predict 16 --all -o "$tmp/out/$set.model.csv"
	run $set export_peak "$BIN" export r8
	run $set export_end "$BIN" export r8 --format speedscope --at end
	run $set export_at "$BIN" export r8 --at $at --value pss
	run $set export_pprof "$BIN" export r8 --format pprof --at $at -o "$tmp/out/$set.pprof"
	run $set diff "$BIN" diff r4 r8 -o "$tmp/out/$set.diff"
done

# The check above is only worth something if the moment matters: the
# sample before it shows other figures.
run small export_before "$BIN" export r8 --at 122.1 --value pss
cmp -s "$tmp/out/small/export_at" "$tmp/out/small/export_before" &&
	fail "the export at $at s and at 122.1 s are the same: pick another moment"

for name in model export_peak export_end export_at export_pprof diff; do
	cmp -s "$tmp/out/small/$name" "$tmp/out/large/$name" ||
		fail "$name: the large run's output differs from the small run's"
done
cmp -s "$tmp/out/small.model.csv" "$tmp/out/large.model.csv" || fail "model -o: the CSVs differ"
cmp -s "$tmp/out/small.pprof" "$tmp/out/large.pprof" || fail "export --format pprof: the profiles differ"
# diff's exact figures (its text rounds them), each rank's peak pss included.
cmp -s "$tmp/out/small.diff/diff.csv" "$tmp/out/large.diff/diff.csv" || fail "diff -o: diff.csv differs"

# 600 times the input: at most a quarter more memory (and 8 MiB of
# slack), and at most 64 MiB however large the file.
for name in model export_peak export_end export_at export_pprof diff; do
	small=$(cat "$tmp/out/small/$name.rss")
	large=$(cat "$tmp/out/large/$name.rss")
	echo "model-export-memory: $name: small runs -> maxrss $((small / 1024)) MiB;" \
	     "${large_mib} MiB rank file -> $((large / 1024)) MiB"
	if [ "$large" -gt $((small * 5 / 4 + 8192)) ] || [ "$large" -gt $((64 * 1024)) ]; then
		fail "$name: memory grows with the input"
	fi
done
echo "model-export-memory: ok"
