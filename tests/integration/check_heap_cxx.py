#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Check heap_sites.csv and heap_sites_peak.csv of a --heap run of mpi_cxx (--unit-mib U):

    check_heap_cxx.py OUT_DIR --ranks N --unit-mib U [--folded-peak FILE]

Rank R, with u = (R+1)*U MiB, makes by construction, every byte through
libstdc++'s operator new: four std::vector<double> of u in the program's
make_vectors, a new double[] of u and an aligned operator new of u in its
main (6u from the program), and in its own library (libcxxtruth.so) a new
char[] of u and a std::vector<int> of u (2u, plus the vector object).
operator new only forwards (uprobe_specs/libstdcxx.spec), so its blocks
must be counted at the code that said `new`: the program's rows (library
app) and the library's (lib:libcxxtruth.so) must hold those bytes, every
one freed by the end, and no row may sit in operator new itself.

Its peak is in the middle: everything is held on the last plateau, then
all of it freed before the end. So heap_sites_peak.csv (the sites live at
each rank's peak) must hold, live, the 6u of the program's rows and the
2u of the library's (6 and 2 blocks at least), where heap_sites.csv's
live bytes are about none; and `memattr-bpf export --value heap` at the
peak (--folded-peak: its folded output) must give each rank those bytes.
"""
import argparse
import csv
import re
import sys

MIB = 1024 * 1024
SLACK = MIB	# the program's own small blocks (its vector of vectors, ...)
HEADER = ["rank", "pid", "library", "site", "calls", "frees", "live_bytes",
          "peak_live_bytes", "total_bytes"]


def read_sites(out_dir, name):
    with open(f"{out_dir}/{name}", newline="") as f:
        rows = list(csv.reader(f))
    if not rows or rows[0] != HEADER:
        print(f"FAIL: {name} header {rows[:1]}")
        return None
    return [dict(zip(HEADER, r)) for r in rows[1:]]


def read_folded(path):
    """Bytes per (rank, library) of a folded export: "rank R;library;...;function N"."""
    by = {}
    with open(path) as f:
        for line in f:
            stack, _, n = line.rstrip("\n").rpartition(" ")
            frames = stack.split(";")
            if len(frames) >= 2 and frames[0].startswith("rank "):
                key = (int(frames[0][5:]), frames[1])
                by[key] = by.get(key, 0) + int(n)
    return by


def check_peak(rank, u, peak_sites, folded, fails):
    mine = [s for s in peak_sites if s["rank"] == str(rank)]
    for lib, want, blocks in (("app", 6 * u, 6), ("lib:libcxxtruth.so", 2 * u, 2)):
        own = [s for s in mine if s["library"] == lib]
        live = sum(int(s["live_bytes"]) for s in own)
        objs = sum(int(s["calls"]) - int(s["frees"]) for s in own)
        print(f"rank {rank} {lib} at the peak: {len(own)} sites live, {live} B in {objs} blocks; "
              f"by construction {want} B in {blocks} blocks at least")
        if not want <= live <= want + SLACK:
            fails.append(f"rank {rank}: {lib}: {live} B live at the peak, want {want} B "
                         f"(+ at most {SLACK} of small blocks)")
        if objs < blocks:
            fails.append(f"rank {rank}: {lib}: {objs} blocks live at the peak, want {blocks} at least")
        if folded is not None:
            got = folded.get((rank, lib), 0)
            print(f"rank {rank} {lib}: export --at peak --value heap: {got} B")
            if got != live:
                fails.append(f"rank {rank}: {lib}: export at the peak gives {got} B, "
                             f"heap_sites_peak.csv {live} B")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out_dir")
    ap.add_argument("--ranks", type=int, required=True)
    ap.add_argument("--unit-mib", type=int, required=True)
    ap.add_argument("--folded-peak")
    a = ap.parse_args()
    sites, peak_sites = read_sites(a.out_dir, "heap_sites.csv"), read_sites(a.out_dir, "heap_sites_peak.csv")
    if sites is None or peak_sites is None:
        return 1
    folded = read_folded(a.folded_peak) if a.folded_peak else None
    fails = []
    for rank in range(a.ranks):
        check_peak(rank, (rank + 1) * a.unit_mib * MIB, peak_sites, folded, fails)
    for rank in range(a.ranks):
        u = (rank + 1) * a.unit_mib * MIB
        mine = [s for s in sites if s["rank"] == str(rank)]
        inside_new = [s["site"] for s in mine if re.match(r"^libstdc\+\+\.so[^:]*:_Zn[wa]", s["site"])]
        if inside_new:
            fails.append(f"rank {rank}: blocks counted inside operator new, not at its caller: {inside_new}")
        for lib, want, prefix in (("app", 6 * u, "mpi_cxx:"),
                                  ("lib:libcxxtruth.so", 2 * u, "libcxxtruth.so:")):
            own = [s for s in mine if s["library"] == lib]
            total = sum(int(s["total_bytes"]) for s in own)
            peak = sum(int(s["peak_live_bytes"]) for s in own)
            live = sum(int(s["live_bytes"]) for s in own)
            print(f"rank {rank} {lib}: {len(own)} sites, total {total} B, peaks {peak} B, "
                  f"live {live} B; by construction {want} B")
            if not want <= total <= want + SLACK or not want <= peak <= want + SLACK:
                fails.append(f"rank {rank}: {lib}: total {total} B and peaks {peak} B, want "
                             f"{want} B (+ at most {SLACK} of small blocks)")
            if live > SLACK:
                fails.append(f"rank {rank}: {lib}: {live} B still live after everything was freed")
            foreign = [s["site"] for s in own if not s["site"].startswith(prefix)]
            if foreign:
                fails.append(f"rank {rank}: rows of {lib} whose site is elsewhere: {foreign}")
    for f in fails:
        print("FAIL:", f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
