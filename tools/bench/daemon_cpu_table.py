#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""daemon_cpu.sh's table: cpu.tsv (a row per run) to Markdown, medians and
ranges per configuration, and with --update-doc FILE into FILE's block of
daemon_cpu.sh.

   daemon_cpu_table.py CPU_TSV --date D --minutes M --commit C --kernel K
                       --command CMD --daemon DESC [--update-doc FILE]
"""
import argparse
import csv
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import doc_block  # noqa: E402

BEGIN = "<!-- tools/bench/daemon_cpu.sh: latest run begins -->"
END = "<!-- tools/bench/daemon_cpu.sh: latest run ends -->"
# Where a first run puts the block: after the cost to processes not traced.
ANCHOR = "<!-- tools/bench/beside_daemon.sh: latest run ends -->"
HEADING = "#### What the node service takes from a job's CPU"
TARGET_PCT = 1.0


def spread(rows, key, fmt="{:.2f}"):
    v = sorted(float(r[key]) for r in rows if r.get(key) not in ("", None))
    if not v:
        return "-", None
    m = statistics.median(v)
    return f"{fmt.format(m)} ({fmt.format(v[0])} - {fmt.format(v[-1])})", v[-1]


def fmt_from(t):
    return "-" if t is None else "never" if t == float("inf") else f"{t:.0f}"


def within_from(rs):
    """The job length (wall s) from which the whole job's share is within
    the target: the start and end spread over it, at the settled rate and
    the job's own CPU rate (medians). None: no settled figure; inf: never."""
    def med(key):
        v = [float(r[key]) for r in rs if r.get(key) not in ("", None)]
        return statistics.median(v) if v else None
    steady, oneoff = med("steady_pct"), med("oneoff_ms_per_rank")
    cpu_rate = statistics.median(float(r["job_cpu_s"]) / float(r["wall_s"]) for r in rs)
    if steady is None or oneoff is None:
        return None
    if steady >= TARGET_PCT:
        return float("inf")
    return max(0.0, oneoff * int(rs[0]["np"]) / 1000 / ((TARGET_PCT - steady) / 100 * cpu_rate))


def table(rows, a):
    by = {}
    for r in rows:
        by.setdefault((r["app"], r["mpi"], r["np"]), []).append(r)
    out = [f"Run of {a.date} ({a.minutes} min), tool commit {a.commit}; 2 cores, {a.kernel}. Command:",
           "", "```", a.command, "```", "",
           f"The node service: `memattr-bpf daemon {a.daemon}`, started before each run and stopped after it; "
           "one job per run, as an unprivileged user. Medians (min - max) over the runs. " +
           ("Warm (`--warm`): the same job ran once before under the same daemon, unmeasured, as a service "
            "left on has met the MPI libraries before (their symbols and unwind tables loaded once per file)."
            if " --warm" in a.command else
            "Cold: the daemon met the job's libraries for the first time (their symbols and unwind tables "
            "loaded during the run)."),
           "",
           "| app | MPI | ranks | runs | job wall (s) | job CPU (s) | service CPU (ms per job-s) "
           "| BPF run time (ms per job-s) | service share of the job's CPU (%) | within 1%? "
           "| share once settled (%) | start and end (ms per rank) | within 1% from a job of (s) |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|"]
    over, settled_over = [], []
    for (app, mpi, np), rs in by.items():
        for r in rs:
            w = float(r["wall_s"])
            r["bpf_ms_per_s"] = f"{float(r['bpf_ms']) / w:.3f}" if r.get("bpf_ms") else ""
        share, worst = spread(rs, "share_pct")
        med = statistics.median(float(r["share_pct"]) for r in rs if r.get("share_pct")) if worst is not None else None
        verdict = "-" if med is None else ("yes" if worst <= TARGET_PCT else
                                           "median only" if med <= TARGET_PCT else "**no**")
        if med is not None and worst > TARGET_PCT:
            over.append(f"{app}/{mpi}/{np}")
        settled = [float(r["steady_pct"]) for r in rs if r.get("steady_pct")]
        if not settled or max(settled) > TARGET_PCT:
            settled_over.append(f"{app}/{mpi}/{np}" + ("" if settled else " (no settled figure)"))
        ranks = f"{np} (> cores)" if int(np) > 2 else np
        out.append(f"| {app} | {mpi} | {ranks} | {len(rs)} | {spread(rs, 'wall_s')[0]} | {spread(rs, 'job_cpu_s')[0]} "
                   f"| {spread(rs, 'cpu_ms_per_s')[0]} | {spread(rs, 'bpf_ms_per_s')[0]} | {share} | {verdict} "
                   f"| {spread(rs, 'steady_pct')[0]} | {spread(rs, 'oneoff_ms_per_rank', '{:.1f}')[0]} "
                   f"| {fmt_from(within_from(rs))} |")
    out += ["",
            "Service CPU: every thread of the daemon, from just before the job starts until its session's last "
            "writes. BPF run time: the daemon's programs (`kernel.bpf_stats_enabled`, on only while the job ran; "
            "its own clock reads make the figure an upper bound); they run mostly in the job's processes, inside "
            "their CPU time. Share: (service CPU + BPF run time) / (the job's CPU time - BPF run time), what the "
            "service takes as a share of what the job needs: on a node whose cores the ranks fill, the slowdown "
            "it can cause through CPU. It leaves out what no counter shows (caches, the traced syscall path, "
            "locks); the wall-time ratios above include those, inside this host's noise. "
            f"Once settled: the same share from {a.settle} s after the job's start (its ranks up, MPI set up) "
            "to its exit, the rate a longer job's share tends to; start and end: what the daemon spent before "
            "that mark and on the session's last writes beyond that rate, per rank, paid once per job "
            "whatever its length. Within 1% from: the wall time from which a job's whole share is within 1% "
            "(start and end spread over it at the settled rate, at the job's own CPU rate; medians).",
            f"Within {TARGET_PCT:g}% in every run: " +
            ("every configuration." if not over else f"all but {', '.join(over)}.") +
            f" Once settled, within {TARGET_PCT:g}% in every run: " +
            ("every configuration." if not settled_over else f"all but {', '.join(settled_over)}.")]
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("cpu_tsv")
    for k in ("date", "minutes", "commit", "kernel", "command", "daemon"):
        p.add_argument(f"--{k}", required=True)
    p.add_argument("--settle", default="1.5")
    p.add_argument("--update-doc")
    a = p.parse_args()
    with open(a.cpu_tsv) as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    if not rows:
        print("daemon_cpu_table.py: no runs", file=sys.stderr)
        return 1
    lines = table(rows, a)
    print("\n".join(lines))
    if a.update_doc and not doc_block.put(a.update_doc, BEGIN, END, lines, ANCHOR, HEADING,
                                          "daemon_cpu_table.py"):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
