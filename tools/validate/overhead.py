#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Table of tools/validate/run.sh --overhead: what the tool costs applications.

    overhead.py RESULTS_DIR [--doc FILE]
        reads RESULTS_DIR/overhead.tsv (one line per run: the job alone,
        "untraced", or launched under the tool or run under the node
        service, "traced", in alternating pairs; meta.txt's
        overhead_under says which) and prints Markdown; with --doc, also
        replaces FILE's block for that with it

Per application, MPI and rank count: the median over the pairs of each
variant, and their ratio (with the range of the pairs' own ratios), for
the job's whole wall time (launcher start to exit: MPI start-up included;
traced, the tool's own start and its last write too) and for the time the
application reports for its own run.
Exit 1 when the file is missing or a pair is incomplete.
"""
import csv
import os
import statistics
import sys
from collections import defaultdict

from table import parse_args, read_meta, sources_line, update_doc

# Wall-time targets: issue 11's for the per-job tool, issue 34's for the node service.
TARGETS = {"tool": (1.03, "Issue 11"), "daemon": (1.01, "Issue 34")}
# The doc's block for each --overhead-under: the per-job tool, the node service.
BLOCKS = {
    "tool": ("<!-- tools/validate/run.sh --overhead: latest run begins -->",
             "<!-- tools/validate/run.sh --overhead: latest run ends -->"),
    "daemon": ("<!-- tools/validate/run.sh --overhead-under daemon: latest run begins -->",
               "<!-- tools/validate/run.sh --overhead-under daemon: latest run ends -->"),
}
UNDER = {"tool": "launched under the tool", "daemon": "under the node service"}


def median(xs):
    return statistics.median(xs) if xs else None


def fmt(x, spec):
    return "?" if x is None else format(x, spec)


def main():
    parsed = parse_args("overhead.py", sys.argv[1:])
    if not parsed:
        return 2
    res, doc = parsed
    runs = defaultdict(lambda: defaultdict(lambda: {"wall": [], "app": []}))
    try:
        with open(os.path.join(res, "overhead.tsv")) as f:
            for row in csv.DictReader(f, delimiter="\t"):
                v = runs[(row["app"], row["mpi"], int(row["np"]))][row["variant"]]
                v["wall"].append(float(row["wall_s"]))
                if row["app_s"]:
                    v["app"].append(float(row["app_s"]))
    except (OSError, KeyError, ValueError) as e:
        print(f"overhead.py: cannot read {res}/overhead.tsv: {e}", file=sys.stderr)
        return 1
    top = read_meta(os.path.join(res, "meta.txt"))
    under = top.get("overhead_under", "tool")
    if under not in BLOCKS:
        print(f"overhead.py: {res}/meta.txt: unknown overhead_under '{under}'", file=sys.stderr)
        return 1
    target, issue = TARGETS[under]
    cpus = int(top.get("cpus", "0") or 0)
    out = [f"Tool commit {top.get('tool_commit', '?')}; {top.get('when', '?')}; "
           f"{top.get('cpus', '?')} cores, Linux {top.get('kernel', '?')}.", sources_line(top), "",
           f"| app | MPI | ranks | pairs | wall untraced (s) | wall {UNDER[under]} (s) | wall ratio "
           f"| pairs' wall ratios | app's own time untraced (s) | {UNDER[under]} (s) | ratio |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    bad = 0
    over = []   # (app, mpi, wall ratio) past issue 11's target
    for (app, mpi, np), v in sorted(runs.items()):
        u, t = v["untraced"], v["traced"]
        pairs = min(len(u["wall"]), len(t["wall"]))
        if pairs == 0 or len(u["wall"]) != len(t["wall"]):
            bad += 1
        uw, tw, ua, ta = median(u["wall"]), median(t["wall"]), median(u["app"]), median(t["app"])
        if uw and tw and tw / uw > target:
            over.append(f"{app}/{mpi} {tw / uw:.3f}x")
        # Each pair's own ratio (its runs were back to back, untraced first
        # in odd pairs, traced first in even ones): their spread is how far
        # this host's noise moves one pair.
        ratios = [b / a for a, b in zip(u["wall"], t["wall"]) if a > 0]
        spread = f"{min(ratios):.3f}-{max(ratios):.3f}" if ratios else "?"
        ranks = f"{np} (> cores)" if cpus and np > cpus else f"{np}"
        out.append(f"| {app} | {mpi} | {ranks} | {pairs} | {fmt(uw, '.2f')} | {fmt(tw, '.2f')} "
                   f"| {fmt(tw / uw if uw and tw else None, '.3f')}x | {spread} | {fmt(ua, '.2f')} | {fmt(ta, '.2f')} "
                   f"| {fmt(ta / ua if ua and ta else None, '.3f')}x |")
    out.append("")
    held = ("under the tool it also holds the tool's start (loading its BPF programs) and its last writes"
            if under == "tool" else
            "the node service was started before the run (its programs loaded) and stopped after it, as a "
            "site leaves it on (`memattr-bpf daemon`, its defaults: 1 s samples, smaps every 10 s"
            + (f"; with `{top['tool_args']}`" if top.get("tool_args") else "") + "); each "
            "traced run's spool held every rank's timeline")
    out.append(f"Medians over the pairs; odd pairs ran untraced first, even pairs traced first. Wall: the whole job, launcher start to exit; {held}. App's own time: what "
               "the application prints for its run (LULESH `Elapsed time`, taken whole from its grind time, HPCCG `Total`, CloverLeaf's last "
               "`Wall clock`, LAMMPS `Loop time`).")
    out.append("")
    out.append("Ranks: \"(> cores)\" marks a job of more ranks than the host has cores (oversubscribed).")
    out.append("")
    out.append(f"{issue}'s target, wall time <= {target:.2f}x: " +
               (f"met by {len(runs) - len(over)} of {len(runs)}; over: {', '.join(over)}." if over
                else f"met by all {len(runs)}."))
    print("\n".join(out))
    if doc and not update_doc(doc, res, top, out, *BLOCKS[under]):
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
