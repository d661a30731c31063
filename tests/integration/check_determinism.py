#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Same job, same figures: compare what each component of each rank holds
at the job's peak over several runs of one job (their rank-R.csv files).

    check_determinism.py OUT_DIR... [--tol 0.01] [--floor-kib 64]
                         [--components app,mpi,...] [--no-libs]

The figure of a run is taken at the last sample of the plateau where the
rank's total is at its peak (within 1%): the workload holds everything
there for a while, so the tool has caught up with its events whatever the
load, and transients (MPI_Init) do not count. For every rank and component,
the largest and smallest figure over the runs must lie within --tol of
their median, plus --floor-kib for components near zero (every lib:*
component is checked too unless --no-libs) (a page or two of
a small component is not an attribution difference). Prints the spread of
each; exits 1 on any failure.
"""
import argparse
import csv
import os
import statistics
import sys


def read_peak_plateau(out_dir):
    """{(rank, component): rss} at the last sample of each rank's peak plateau."""
    out = {}
    for name in sorted(os.listdir(out_dir)):
        if not (name.startswith("rank-") and name.endswith(".csv")):
            continue
        samples = {}
        with open(os.path.join(out_dir, name), newline="") as f:
            for rec in csv.DictReader(f):
                t = float(rec["time_s"])
                samples.setdefault(t, {})[rec["component"]] = int(rec["rss_bytes"])
                rank = int(rec["rank"])
        times = sorted(samples)
        peak = max(samples[t].get("total", 0) for t in times)
        last = max(t for t in times if samples[t].get("total", 0) >= 0.99 * peak)
        for comp, v in samples[last].items():
            out[(rank, comp)] = v
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out_dirs", nargs="+")
    ap.add_argument("--tol", type=float, default=0.01)
    ap.add_argument("--floor-kib", type=int, default=64)
    ap.add_argument("--components", default="total,app,mpi,libc,stack,unattributed")
    ap.add_argument("--no-libs", action="store_true", help="skip the lib:* components")
    a = ap.parse_args()
    runs = [read_peak_plateau(d) for d in a.out_dirs]
    keys = sorted(set().union(*runs))
    wanted = set(a.components.split(","))
    fails = 0
    for rank, comp in keys:
        if comp not in wanted and (a.no_libs or not comp.startswith("lib:")):
            continue
        vals = [r.get((rank, comp), 0) for r in runs]
        med = statistics.median(vals)
        spread = max(abs(max(vals) - med), abs(med - min(vals)))
        limit = a.tol * med + a.floor_kib * 1024
        pct = 100.0 * spread / med if med else 0.0
        ok = spread <= limit
        fails += not ok
        print(f"{'ok' if ok else 'FAIL'} rank {rank} {comp}: median {med / 1048576:.2f} MiB, "
              f"min {min(vals) / 1048576:.2f}, max {max(vals) / 1048576:.2f} "
              f"(spread {spread / 1048576:.3f} MiB, {pct:.2f}%)")
    print(f"check_determinism: {len(runs)} runs, {'all within' if not fails else f'{fails} outside'} "
          f"{a.tol * 100:.0f}% (+{a.floor_kib} KiB)")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
