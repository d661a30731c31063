#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Check memattr-bpf's attribution against mpi_truth's own account of what
each component holds, plateau by plateau.

    check_truth.py OUT_DIR --ranks N --sampler FILE --log-dir DIR
                   [--t-line MONO] [--tol 0.05] [--floor-kib 512] [--prefix truth]
                   [--total-tol F]

mpi_truth writes, per rank, its event log (truth-rank-R.csv) and what every
plateau should show (expect-rank-R.csv: component growth over the baseline
plateau, by construction). Other workloads that write the same two files
(mpi_dlopen: dlopen-rank-R.csv) are checked with --prefix. The tool's time axis is lined up with
CLOCK_MONOTONIC through the /proc sampler (as check_csv.py does). In every
plateau, each component's rss must be within --tol of its truth (the
baseline value plus the expected growth; with --absolute, the expected
value itself: mpi_held's memory was all there before the tool came), plus a floor of --floor-kib for
components whose truth is near zero: after free and malloc_trim, glibc
keeps up to M_TOP_PAD (128 KiB) resident at the top of each arena, and
mpi_truth's program has two (the main heap and its thread's), plus the
arenas' header pages. With --total-tol, every sample's `total` inside a
plateau must also be the kernel's: within F of the sampler's VmRSS nearest
it (+64 KiB). Prints each rank's worst error per component; exits 1 on any
failure. The CSV contract itself is check_csv.py's job.
"""
import argparse
import csv
import os
import sys

from check_csv import (MIB, Checker, mib, origin_from_sampler, read_phase_log,
                       read_rank_file, read_sampler)


def read_expect(path):
    """[(plateau, first_event, last_event, {component: bytes})] in file order."""
    out = []
    with open(path, newline="") as f:
        for rec in csv.DictReader(f):
            key = (rec["plateau"], rec["first_event"], rec["last_event"])
            if not out or out[-1][:3] != key:
                out.append(key + ({},))
            out[-1][3][rec["component"]] = int(rec["bytes"])
    return out


def sample_words(t, comps, series, origin):
    """The whole sample a check failed at, and the kernel's VmRSS nearest it
    (the sampler's): tells a tool that lost a change from memory the kernel
    still held."""
    at = origin + t
    near = min(series, key=lambda s: abs(s[0] - at)) if series else None
    parts = ", ".join(f"{k} {mib(v[0])}" for k, v in sorted(comps.items()) if v[0])
    kern = (f"sampler VmRSS {mib(near[1])} at {near[0] - at:+.2f} s" if near
            else "no sampler point")
    return f"sample time_s {t:.3f}: {parts}; {kern}"


# The sampler reads VmRSS up to 10 ms from the tool's own read.
TOTAL_FLOOR = 64 * 1024


def kernel_rss(series, at):
    """The sampler's VmRSS nearest CLOCK_MONOTONIC time at."""
    return min(series, key=lambda s: abs(s[0] - at))[1]


def check_rank(ck, a, rank, sampler, rank_pid):
    name = f"rank-{rank}.csv"
    pid, samples = read_rank_file(ck, os.path.join(a.out_dir, name), rank)
    if not samples:
        return f"rank {rank}: FAIL no samples"
    if rank not in rank_pid:
        ck.fail(name, "the sampler never saw this rank")
        return f"rank {rank}: FAIL"
    got = origin_from_sampler(samples, sampler[rank_pid[rank]], a.t_line)
    if got is None:
        ck.fail(name, "cannot line the timeline up with the sampler")
        return f"rank {rank}: FAIL"
    origin, unc = got
    margin = max(a.margin, unc + 0.05)
    ev, _ = read_phase_log(os.path.join(a.log_dir, f"{a.prefix}-rank-{rank}.csv"))
    plateaus = read_expect(os.path.join(a.log_dir, f"expect-rank-{rank}.csv"))
    base = None
    worst = {}
    for plateau, first, last, expect in plateaus:
        where = f"{name} {plateau}"
        if first not in ev or last not in ev:
            ck.fail(where, f"events {first}/{last} missing from the workload's log")
            continue
        lo, hi = ev[first] + margin, ev[last] - margin
        inwin = [c for t, c, _ in samples if lo <= origin + t <= hi]
        times = [t for t, _, _ in samples if lo <= origin + t <= hi]
        if not inwin:
            ck.fail(where, f"no sample inside the plateau ({hi - lo:.2f} s after margins)")
            continue
        if base is None:
            base = {comp: 0 if a.absolute else inwin[0].get(comp, (0, 0))[0]
                    for comp in expect}
        if a.total_tol is not None:
            for t, c in zip(times, inwin):
                kern = kernel_rss(sampler[rank_pid[rank]], origin + t)
                err = c.get("total", (0, 0))[0] - kern
                w = worst.setdefault("total vs VmRSS", [0, 0.0])
                w[0] = max(w[0], abs(err))
                w[1] = max(w[1], abs(100.0 * err / kern) if kern else 0.0)
                if abs(err) > a.total_tol * kern + TOTAL_FLOOR:
                    ck.fail(where, f"total {mib(c.get('total', (0, 0))[0])} is not the kernel's "
                            f"VmRSS {mib(kern)}: off by {mib(err)}; " + sample_words(t, c, sampler[rank_pid[rank]], origin))
                    break
        for comp, grow in expect.items():
            truth = base[comp] + grow
            tol = a.tol * truth + a.floor_kib * 1024
            for t, c in zip(times, inwin):
                val = c.get(comp, (0, 0))[0]
                err = val - truth
                # Percentages mean something only for memory that is there.
                pct = 100.0 * err / truth if truth >= MIB else 0.0
                w = worst.setdefault(comp, [0, 0.0])
                w[0] = max(w[0], abs(err))
                w[1] = max(w[1], abs(pct))
                if abs(err) > tol:
                    ck.fail(where, f"{comp} rss {mib(val)}, truth {mib(truth)} "
                            f"(baseline {mib(base[comp])} + {mib(grow)}): off by "
                            f"{mib(err)}, tolerance {mib(tol)}; "
                            + sample_words(t, c, sampler[rank_pid[rank]], origin))
                    break
    parts = []
    for comp, (err, pct) in sorted(worst.items()):
        parts.append(f"{comp} {err / MIB:.2f} MiB / {pct:.1f}%")
    return (f"rank {rank} pid {pid}: largest error per component over "
            f"{len(plateaus)} plateaus (bytes / % of truths >= 1 MiB): " + "; ".join(parts))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--ranks", type=int, required=True)
    ap.add_argument("--sampler", required=True)
    ap.add_argument("--log-dir", required=True)
    ap.add_argument("--t-line", type=float)
    ap.add_argument("--tol", type=float, default=0.05)
    ap.add_argument("--floor-kib", type=int, default=512)
    ap.add_argument("--margin", type=float, default=0.2)
    ap.add_argument("--total-tol", type=float,
                    help="also: total within this share of the sampler's VmRSS in every plateau")
    ap.add_argument("--absolute", action="store_true",
                    help="the expect files hold each component's whole size, not its "
                         "growth over the first plateau (memory held before attach)")
    ap.add_argument("--prefix", default="truth",
                    help="the workload's event log is PREFIX-rank-R.csv")
    a = ap.parse_args()

    ck = Checker()
    sampler, sampler_ranks = read_sampler(a.sampler)
    rank_pid = {r: p for p, r in sampler_ranks.items()}
    lines = [check_rank(ck, a, r, sampler, rank_pid) for r in range(a.ranks)]
    for line in lines:
        print(line)
    for f in ck.failures:
        print(f"FAIL: {f}")
    if ck.failures:
        print(f"check_truth: {len(ck.failures)} failure(s)")
        return 1
    print(f"check_truth: every component within {a.tol * 100:.0f}% (+{a.floor_kib} KiB) "
          f"of its truth at every plateau, {a.ranks} rank(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
