#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""beside_daemon.sh's table: figures.tsv (item, variant, rep, value, unit) to
Markdown, and with --update-doc FILE into FILE's block of beside_daemon.sh.

   beside_daemon_table.py FIGURES --commit C --command CMD --minutes M
                      --daemon DESC [--update-doc FILE]
"""
import argparse
import os
import statistics
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import doc_block  # noqa: E402

BEGIN = "<!-- tools/bench/beside_daemon.sh: latest run begins -->"
END = "<!-- tools/bench/beside_daemon.sh: latest run ends -->"
# Where a first run puts the block: after the node service's own overhead.
ANCHOR = "<!-- tools/validate/run.sh --overhead-under daemon: latest run ends -->"
TARGET = 1.005

WHAT = {
    "storm1": "page-fault storm, 1 thread (pages/s)",
    "storm1cpu": "page-fault storm, 1 thread: its CPU time per page (ns)",
    "storm8": "page-fault storm, 8 threads of one process (pages/s)",
    "storm8cpu": "page-fault storm, 8 threads: CPU time per page (ns)",
    "getppid": "getppid() (ns per call)",
    "readzero": "read() of 64 bytes from /dev/zero (ns per call)",
    "spawn": "fork + exec of /bin/true, waited for (us per command)",
    "spawncpu": "fork + exec: CPU time per command, the loop and its children (ns)",
}
RATES = {"storm1", "storm8"}


def cost(item, alone, beside):
    """Slowdown beside the service: > 1 is slower, for rates and times alike."""
    return alone / beside if item in RATES else beside / alone


def table(rows, a):
    fig = defaultdict(dict)
    for item, variant, rep, value in rows:
        fig[(item, variant)][rep] = value
    out = [f"Run of {a.date} ({a.minutes} min), tool commit {a.commit}; 2 cores, {a.kernel}. Command:",
           "", "```", a.command, "```", "",
           f"The node service: `memattr-bpf daemon {a.daemon}`, started before its block and stopped after it.",
           "",
           "| workload | alone: median (min - max) | beside the node service: median (min - max) "
           "| slowdown (ratio of medians) | repetitions' own ratios | within 1.005x? |",
           "|---|---:|---:|---:|---:|---|"]
    missed = []
    for item in WHAT:
        al, be = fig.get((item, "alone")), fig.get((item, "beside"))
        if not al or not be:
            continue
        ma, mb = statistics.median(al.values()), statistics.median(be.values())
        r = cost(item, ma, mb)
        own = sorted(cost(item, al[k], be[k]) for k in al if k in be)
        # Inside the noise when the repetitions' own ratios fall on both sides of 1.
        verdict = ("yes" if r <= TARGET else
                   "no, inside the noise" if own[0] <= 1.0 <= own[-1] else "**no**")
        if r > TARGET:
            missed.append(item)
        out.append(f"| {WHAT[item]} | {ma:.1f} ({min(al.values()):.1f} - {max(al.values()):.1f}) "
                   f"| {mb:.1f} ({min(be.values()):.1f} - {max(be.values()):.1f}) | {r:.3f}x "
                   f"| {own[0]:.3f} - {own[-1]:.3f} | {verdict} |")
    out += ["", f"{len(next(iter(fig.values())))} repetitions; the workloads run as an unprivileged "
            "user in no job, so the service watches their fork, exec and exit and traces nothing of "
            "them. Slowdown: for rates, median alone / median beside; for times, beside / alone. "
            "\"Inside the noise\": the repetitions' own ratios (each repetition's two runs, minutes "
            "apart at most) fall on both sides of 1.",
            f"Issue 34's target, each <= {TARGET}x: " +
            (f"missed by {', '.join(missed)}." if missed else "met by every workload.")]
    return out


def update_doc(path, lines):
    return doc_block.put(path, BEGIN, END, lines, ANCHOR, "#### Processes the node service does not trace",
                         "beside_daemon_table.py")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("figures")
    p.add_argument("--commit", required=True)
    p.add_argument("--command", required=True)
    p.add_argument("--minutes", required=True)
    p.add_argument("--daemon", required=True)
    p.add_argument("--date", required=True)
    p.add_argument("--kernel", required=True)
    p.add_argument("--update-doc")
    a = p.parse_args()
    rows = []
    with open(a.figures) as f:
        for line in f:
            item, variant, rep, value = line.rstrip("\n").split("\t")[:4]
            rows.append((item, variant, int(rep), float(value)))
    if not rows:
        print("beside_daemon_table.py: no figures", file=sys.stderr)
        return 1
    lines = table(rows, a)
    print("\n".join(lines))
    if a.update_doc and not update_doc(a.update_doc, lines):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
