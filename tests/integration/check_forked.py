#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Every child fork_pace logged has its pid-<P>.csv, with its memory.

usage: check_forked.py OUT_DIR CHILDREN_CSV --launcher PID

CHILDREN_CSV holds "k,pid,bytes" per child (bytes: what it touched and held
until every child was sampled). Its file's peak `total` rss must be at least
bytes and at most bytes + SLACK (the program's own pages). The launcher is
followed, not accounted: it has no file.
"""
import argparse
import csv
import os
import sys

SLACK = 4 << 20


def peak_total(path):
    peak = None
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            if row["component"] == "total":
                v = int(row["rss_bytes"])
                peak = v if peak is None else max(peak, v)
    return peak


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("children")
    ap.add_argument("--launcher", type=int, required=True)
    a = ap.parse_args()

    kids = []
    with open(a.children) as f:
        for line in f:
            k, pid, size = line.strip().split(",")
            kids.append((int(k), int(pid), int(size)))
    kids.sort()
    missing, wrong = [], []
    for k, pid, size in kids:
        path = os.path.join(a.out, f"pid-{pid}.csv")
        if not os.path.exists(path):
            missing.append(k)
            continue
        peak = peak_total(path)
        if peak is None or not size <= peak <= size + SLACK:
            wrong.append((k, pid, size, peak))
    if os.path.exists(os.path.join(a.out, f"pid-{a.launcher}.csv")):
        print(f"FAIL: the launcher {a.launcher} has a file: it is followed, not accounted")
        return 1
    print(f"{len(kids)} children, {len(kids) - len(missing)} traced")
    for k, pid, size, peak in wrong:
        print(f"FAIL: child {k} (pid {pid}) held {size} bytes; its peak total is {peak}")
    if missing:
        print(f"FAIL: {len(missing)} of {len(kids)} children have no file: k = {missing}")
    if not kids:
        print("FAIL: no child logged")
    return 1 if missing or wrong or not kids else 0


if __name__ == "__main__":
    sys.exit(main())
