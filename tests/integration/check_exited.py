#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Check that processes which exited during a run kept their data: for each
rank R of an mpi_child run, the child it forked (pid from the workload's
log, DIR/child-rank-R.csv) must have its own pid-<P>.csv that passes the
same contract checks as a rank file (one pid, the partition summing to
total), whose app and total rss reach (R+1)*N MiB (within 3%) before the
child's exit, and a total row in summary.csv with that peak.

    check_exited.py OUT_DIR --ranks N --log-dir DIR --child-mib N --child-ms MS

The file must also span the child's life after its first 0.5 s (a forked
child is named once it has lived that long) to within 0.4 s of its exit.
"""
import argparse
import csv
import os
import sys

from check_csv import MIB, Checker, check_samples, mib, read_summary

RANK_HEADER = ["time_s", "rank", "pid", "component", "rss_bytes", "pss_bytes"]


def child_pid(log_dir, rank):
    with open(os.path.join(log_dir, f"child-rank-{rank}.csv"), newline="") as f:
        for rec in csv.DictReader(f):
            if rec["event"] == "child_hold":
                return int(rec["pid"])
    return None


def read_pid_file(ck, path, pid):
    """[(time_s, {component: (rss, pss)}, lineno)], like check_csv's reader
    but for a process that is not a rank (its rank column is not checked)."""
    name = os.path.basename(path)
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if not rows or rows[0][:6] != RANK_HEADER:
        ck.fail(name, f"header {rows[0] if rows else None} does not start with {RANK_HEADER}")
        return []
    samples, index = [], {}
    for lineno, row in enumerate(rows[1:], start=2):
        if len(row) < 6:
            ck.fail(f"{name}:{lineno}", f"{len(row)} columns")
            continue
        if row[2] != str(pid):
            ck.fail(f"{name}:{lineno}", f"pid {row[2]} in the file of pid {pid}")
        key = row[0]
        if key not in index:
            index[key] = len(samples)
            samples.append((float(key), {}, lineno))
        samples[index[key]][1][row[3]] = (int(row[4]), int(row[5]))
    if not samples:
        ck.fail(name, "no data rows")
    return samples


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--ranks", type=int, required=True)
    ap.add_argument("--log-dir", required=True)
    ap.add_argument("--child-mib", type=int, required=True)
    ap.add_argument("--child-ms", type=int, required=True)
    a = ap.parse_args()

    ck = Checker()
    summary = read_summary(ck, os.path.join(a.out_dir, "summary.csv"))
    by_pid = {}
    for (rank, comp), rec in summary.items():
        by_pid.setdefault(rec["pid"], {})[comp] = rec
    for rank in range(a.ranks):
        pid = child_pid(a.log_dir, rank)
        if pid is None:
            ck.fail(f"rank {rank}", "the workload logged no child")
            continue
        want = (rank + 1) * a.child_mib * MIB
        name = f"pid-{pid}.csv"
        path = os.path.join(a.out_dir, name)
        if not os.path.exists(path):
            ck.fail(name, f"missing: rank {rank}'s child {pid} has no file "
                    f"(files: {sorted(os.listdir(a.out_dir))})")
            continue
        samples = read_pid_file(ck, path, pid)
        if not samples:
            continue
        check_samples(ck, name, samples)
        peak_tot = max(c.get("total", (0, 0))[0] for _, c, _ in samples)
        peak_app = max(c.get("app", (0, 0))[0] for _, c, _ in samples)
        print(f"rank {rank}'s child pid {pid}: {len(samples)} samples "
              f"{samples[0][0]:.2f}-{samples[-1][0]:.2f} s, peak total {mib(peak_tot)}, "
              f"peak app {mib(peak_app)} (held {mib(want)})")
        if peak_tot < 0.97 * want:
            ck.fail(name, f"peak total rss {mib(peak_tot)} < the {mib(want)} the child held")
        if abs(peak_app - want) > 0.03 * want + 256 * 1024:
            ck.fail(name, f"peak app rss {mib(peak_app)}, the child's own block is {mib(want)}")
        span = samples[-1][0] - samples[0][0]
        if span < a.child_ms / 1000 - 0.5 - 0.4:
            ck.fail(name, f"samples span {span:.2f} s of a child that lived {a.child_ms} ms")
        tot = by_pid.get(str(pid), {}).get("total")
        if tot is None:
            ck.fail("summary.csv", f"no total row for the exited child {pid}")
        elif tot["peak_rss_bytes"] is not None and tot["peak_rss_bytes"] < peak_tot:
            ck.fail("summary.csv", f"child {pid}: peak_rss_bytes {tot['peak_rss_bytes']} below "
                    f"its file's {peak_tot}")
    for f in ck.failures:
        print(f"FAIL: {f}")
    if ck.failures:
        print(f"check_exited: {len(ck.failures)} failure(s)")
        return 1
    print(f"check_exited: every exited child's data is there, {a.ranks} rank(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
