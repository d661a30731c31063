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

# The tables (issue 32, finding 12, the rest): summary.csv (model's peaks),
# mpi_calls.csv, heap_sites.csv, heap_sites_peak.csv and alloc_stacks.csv
# (export's and diff's) grow with processes x functions or sites. The
# small set: the synthetic runs with their summary.csv and a few rows of
# each table for their ranks. The large set: the same plus ~1.5 million
# rows per table that no output shows (processes with no timeline, which
# model, export and diff leave out), so every output must stay the small
# set's while each table is tens of MiB. Then a table whose rows all show
# (alloc_stacks.csv of rank 0, ~290 MiB of frames): past RP_MAX_TABLE_BYTES
# (256 MiB) export must refuse it in one line, exit 1, write no file.
#
# Mutations checked to make it fail: model_peaks.c's md_summary_peaks
# replaced by the old whole read (rp_read_summary, then the sorted rows:
# model's memory); summary_keep_row keeping rows with tables_bounded (drop
# `run->tables_bounded ||`: export's and diff's memory); proc_wanted
# returning true (heap sites and stacks of no timeline kept: memory);
# rp_call_wanted returning true (mpi_calls.csv's rows of no process kept:
# memory); rp_table_charge returning 0 (the ~290 MiB table exported:
# exit 0 and a file). On 3ee6244 (main before this) every command of the
# large set fails its memory bound and the refusal is not made.
mkdir "$tmp/tsmall"
for r in 1 2 4 8; do
	"$tmp/synth_job" --nodes 1 --ranks-per-node $r --samples 300 -o "$tmp/tgen$r" >/dev/null
	mv "$tmp/tgen$r/node0000" "$tmp/tsmall/r$r"
done
python3 - "$tmp/tsmall" <<'PY'
import os, sys
top = sys.argv[1]
for r in ("r4", "r8"):
    d = os.path.join(top, r)
    pids = {}
    for name in os.listdir(d):
        if name.startswith("rank-"):
            with open(os.path.join(d, name)) as f:
                f.readline()
                row = f.readline().split(",")
            pids[int(row[1])] = int(row[2])
    hdr = "rank,pid,library,site,calls,frees,live_bytes,peak_live_bytes,total_bytes\n"
    for name, k in (("heap_sites.csv", 1), ("heap_sites_peak.csv", 2)):
        with open(os.path.join(d, name), "w") as f:
            f.write(hdr)
            for rank, pid in sorted(pids.items()):
                f.write("%d,%d,app,solver:build_mesh+0x5a,%d,1,%d,%d,%d\n"
                        % (rank, pid, 10 * k, 4096 * k, 8192, 40960))
                f.write("%d,%d,mpi,libmpi.so:ompi_init+0x10,2,0,%d,1024,1024\n"
                        % (rank, pid, 1024 * k))
    with open(os.path.join(d, "alloc_stacks.csv"), "w") as f:
        f.write("rank,pid,component,stack,rss_bytes,peak_rss_bytes,build_ids\n")
        for rank, pid in sorted(pids.items()):
            f.write("%d,%d,app,solver:main+0x15;solver:build_mesh+0x5a,%d,%d,\n"
                    % (rank, pid, 1 << 20, 2 << 20))
PY
cp -a "$tmp/tsmall" "$tmp/tlarge"
# ~1.5 million rows a table, of processes with no timeline (pids past
# every run's) and, in mpi_calls.csv, no rank.
python3 - "$tmp/tlarge" <<'PY'
import os, sys
top, N = sys.argv[1], 1500000
def fill(path, fmt):
    with open(path, "a") as f:
        for base in range(0, N, 10000):
            f.write("".join(fmt % (900000 + i) for i in range(base, base + 10000)))
for r in ("r1", "r2", "r4", "r8"):
    fill(os.path.join(top, r, "summary.csv"), ",%d,app,4096,1.000,4096,1.000,4096,4096\n")
for r in ("r4", "r8"):
    d = os.path.join(top, r)
    fill(os.path.join(d, "mpi_calls.csv"), ",%d,MPI_Init,,4096,0,4096,4096,0.150,0.950\n")
    fill(os.path.join(d, "heap_sites.csv"), "3,%d,app,solver:build_mesh+0x5a,1,0,64,64,64\n")
    fill(os.path.join(d, "heap_sites_peak.csv"), "3,%d,app,solver:build_mesh+0x5a,1,0,64,64,64\n")
    fill(os.path.join(d, "alloc_stacks.csv"), "3,%d,app,solver:main+0x15;solver:x+0x1,4096,4096,\n")
PY
tables_mib=$(( $(stat -c %s "$tmp/tlarge/r8/mpi_calls.csv") >> 20 ))
[ "$tables_mib" -ge 32 ] || fail "the large mpi_calls.csv is only $tables_mib MiB"
tnames="model model_pss export_end export_heap_end export_heap_peak export_peak export_pprof diff"
for set in tsmall tlarge; do
	run $set model "$BIN" model r1 r2 r4 r8 --predict 16 --all -o "$tmp/out/$set.model.csv"
	run $set model_pss "$BIN" model r1 r2 r4 r8 --pss --stat mean --all
	run $set export_end "$BIN" export r8 --at end
	run $set export_heap_end "$BIN" export r8 --at end --value heap
	run $set export_heap_peak "$BIN" export r8 --at peak --value heap
	run $set export_peak "$BIN" export r8 --at peak --format speedscope
	run $set export_pprof "$BIN" export r8 --at end --format pprof -o "$tmp/out/$set.pprof"
	run $set diff "$BIN" diff r4 r8 -o "$tmp/out/$set.diff"
done
# Worth something only if the small set's tables show: mpi split by
# function, heap sites and allocation stacks in the profiles.
grep -q ';mpi;MPI_Init ' "$tmp/out/tsmall/export_end" || fail "export --at end shows no MPI function"
grep -q ';app;build_mesh ' "$tmp/out/tsmall/export_heap_end" || fail "export --value heap shows no heap site"
grep -q ';app;main;build_mesh ' "$tmp/out/tsmall/export_end" || fail "export --at end shows no allocation stack"
for name in $tnames; do
	cmp -s "$tmp/out/tsmall/$name" "$tmp/out/tlarge/$name" ||
		fail "tables: $name: the large set's output differs from the small set's"
done
cmp -s "$tmp/out/tsmall.model.csv" "$tmp/out/tlarge.model.csv" || fail "tables: model -o: the CSVs differ"
cmp -s "$tmp/out/tsmall.pprof" "$tmp/out/tlarge.pprof" || fail "tables: export --format pprof: the profiles differ"
for f in diff.csv mpi_diff.csv diff.folded diff-end.folded diff.html; do
	cmp -s "$tmp/out/tsmall.diff/$f" "$tmp/out/tlarge.diff/$f" || fail "tables: diff -o: $f differs"
done
grown=
for name in $tnames; do
	small=$(cat "$tmp/out/tsmall/$name.rss")
	large=$(cat "$tmp/out/tlarge/$name.rss")
	echo "model-export-memory: tables: $name: small runs -> maxrss $((small / 1024)) MiB;" \
	     "tables of ~${tables_mib} MiB -> $((large / 1024)) MiB"
	if [ "$large" -gt $((small * 5 / 4 + 8192)) ] || [ "$large" -gt $((64 * 1024)) ]; then
		grown="$grown $name"
	fi
done
[ -z "$grown" ] || fail "tables: memory grows with the tables:$grown"

# Past the limit: rank 0's alloc_stacks.csv, 4,600 stacks of 64 KiB of frames.
cp -a "$tmp/tsmall/r8" "$tmp/over"
python3 - "$tmp/over" <<'PY'
import os, sys
d = sys.argv[1]
with open(os.path.join(d, "rank-0.csv")) as f:
    f.readline()
    pid = int(f.readline().split(",")[2])
frames = ";".join("solver:f%d+0x10" % i for i in range(4200))[:65536]
with open(os.path.join(d, "alloc_stacks.csv"), "a") as f:
    for i in range(4600):
        f.write("0,%d,app,%s;x%d,1,1,\n" % (pid, frames, i))
PY
over_mib=$(( $(stat -c %s "$tmp/over/alloc_stacks.csv") >> 20 ))
python3 - "$tmp/out/over" "$BIN" export "$tmp/over" --at end -o "$tmp/out/over.folded" <<'PY'
import resource, subprocess, sys
r = subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
with open(sys.argv[1], "w") as f:
    f.write("%d\n%d\n%s" % (r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
                            r.stderr.decode(errors="replace")))
PY
rc=$(sed -n 1p "$tmp/out/over")
rss=$(sed -n 2p "$tmp/out/over")
msg=$(tail -n +3 "$tmp/out/over")
echo "model-export-memory: tables: ${over_mib} MiB alloc_stacks.csv of one rank -> exit $rc," \
     "maxrss $((rss / 1024)) MiB: $msg"
[ "$rc" = 1 ] || fail "tables: export of a ${over_mib} MiB alloc_stacks.csv: exit $rc, want 1 (refused)"
[ "$(printf '%s\n' "$msg" | wc -l)" = 1 ] || fail "tables: the refusal is not one line"
printf '%s' "$msg" | grep -q "alloc_stacks.csv:[0-9]*: more than 256 MiB of per-process rows" ||
	fail "tables: the refusal does not name the file, line and limit"
[ ! -e "$tmp/out/over.folded" ] || fail "tables: a refused export left a file"
ls "$tmp/out" | grep -q '^over\.folded\.' && fail "tables: a refused export left a temporary file"
[ "$rss" -le $(((256 + 128) * 1024)) ] || fail "tables: the refused export used $((rss / 1024)) MiB"
echo "model-export-memory: ok"
