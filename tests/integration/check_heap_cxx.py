#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Check heap_sites.csv of a --heap run of mpi_cxx (--unit-mib U):

    check_heap_cxx.py OUT_DIR --ranks N --unit-mib U

Rank R, with u = (R+1)*U MiB, makes by construction, every byte through
libstdc++'s operator new: four std::vector<double> of u in the program's
make_vectors, a new double[] of u and an aligned operator new of u in its
main (6u from the program), and in its own library (libcxxtruth.so) a new
char[] of u and a std::vector<int> of u (2u, plus the vector object).
operator new only forwards (uprobe_specs/libstdcxx.spec), so its blocks
must be counted at the code that said `new`: the program's rows (library
app) and the library's (lib:libcxxtruth.so) must hold those bytes, every
one freed by the end, and no row may sit in operator new itself.
"""
import argparse
import csv
import re
import sys

MIB = 1024 * 1024
SLACK = MIB	# the program's own small blocks (its vector of vectors, ...)
HEADER = ["rank", "pid", "library", "site", "calls", "frees", "live_bytes",
          "peak_live_bytes", "total_bytes"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out_dir")
    ap.add_argument("--ranks", type=int, required=True)
    ap.add_argument("--unit-mib", type=int, required=True)
    a = ap.parse_args()
    with open(f"{a.out_dir}/heap_sites.csv", newline="") as f:
        rows = list(csv.reader(f))
    if not rows or rows[0] != HEADER:
        print(f"FAIL: heap_sites.csv header {rows[:1]}")
        return 1
    sites = [dict(zip(HEADER, r)) for r in rows[1:]]
    fails = []
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
