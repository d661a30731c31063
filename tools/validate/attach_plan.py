#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""The late attach of tools/validate/run.sh must meet a job that still runs
and already holds its memory. This sizes the attach run's job, waits for
its memory, and judges the attach afterwards, from what sampler.py wrote
(status.csv: mono_s,rank,pid,vmrss_kb,vmhwm_kb).

    attach_plan.py size --run DIR --np N (--steps S [--app-time T] | --fixed)
                        --delay D --est E --margin M [--ready-share 0.9]
        DIR: an earlier run of the same application, MPI and ranks (the
        launch run, or a short attach try). Prints shell assignments:
        steps=<steps for the attach run, never below S>, ready_kb=<the sum
        of the ranks' VmRSS to wait for>, plan=<one line: how>. The job
        must run, after every rank is up, until its memory is held
        (t_ready), the delay D, the tool's attach (E seconds, measured
        before) and twice the margin M: the run's part outside its steps
        (start-up, end) is DIR's time from ranks up to end less T (the
        application's own time for its S steps; without T all of it is
        taken as steps). --fixed: an application whose length cannot be
        changed (HPCCG): ready_kb and the plan only, no steps.
    attach_plan.py held --status FILE --np N --kb K --timeout S --pid P
        Waits until the ranks' VmRSS sum in FILE's latest complete sample
        reaches K KiB, P ends or S seconds pass; prints held_wait_s,
        held_kb and held_ok (1 or 0).
    attach_plan.py check --run DIR --margin M
        DIR's meta.txt has tool_start_mono_s and, once the tool traced,
        attach_mono_s. Prints attach_tool_s (tool start to tracing; with
        attach_tool_lower=1 a lower bound: the job ended first),
        attach_outlived_s (the ranks' last sample after the tracing line)
        and held_at_attach_pct (the ranks' VmRSS at the tool's start, as a
        share of their largest sum in the run). Exit 0 when the job
        outlived the attach by M seconds or more, 3 when not.
"""
import argparse
import csv
import math
import os
import sys
import time


def samples(path, np):
    """(mono_s, sum of VmRSS KiB) of every sample that saw np ranks."""
    by = {}
    order = []
    try:
        with open(path) as f:
            for r in csv.DictReader(f):
                t = r["mono_s"]
                if t not in by:
                    by[t] = {}
                    order.append(t)
                by[t][r["rank"]] = int(r["vmrss_kb"])
    except (OSError, KeyError, ValueError):
        return []
    return [(float(t), sum(by[t].values())) for t in order if len(by[t]) >= np]


def last_seen(path):
    """The last mono_s at which the sampler saw any rank."""
    last = None
    try:
        with open(path) as f:
            for r in csv.DictReader(f):
                last = float(r["mono_s"])
    except (OSError, KeyError, ValueError):
        pass
    return last


def read_meta(path):
    out = {}
    try:
        with open(path) as f:
            for line in f:
                if "=" in line:
                    k, v = line.rstrip("\n").split("=", 1)
                    out[k] = v
    except OSError:
        pass
    return out


def size(a):
    s = samples(os.path.join(a.run, "sampler", "status.csv"), a.np)
    if not s:
        print(f"steps={a.steps}\nready_kb=0\n"
              f"plan=no sample of {a.np} ranks in {os.path.basename(a.run)}: steps as given")
        return 0
    up, end = s[0][0], s[-1][0]
    run_s = end - up
    peak = max(v for _, v in s)
    t_ready = next(t for t, v in s if v >= a.ready_share * peak) - up
    need = t_ready + a.delay + a.est + 2 * a.margin
    held = (f"{100 * a.ready_share:.0f}% of its {peak / 1024:.0f} MiB held {t_ready:.2f} s after ranks up; "
            f"wanted after ranks up: that + {a.delay:g} s delay + {a.est:.1f} s attach + 2 x {a.margin:g} s "
            f"= {need:.1f} s")
    if a.fixed:
        print(f"steps=0\nready_kb={int(a.ready_share * peak)}")
        print(f"plan={os.path.basename(a.run)}: ranks up to end {run_s:.1f} s (its length fixed), {held}")
        return 0
    loop = a.app_time if a.app_time and 0 < a.app_time <= run_s else run_s
    outside = run_s - loop
    pace = loop / a.steps
    steps = max(a.steps, math.ceil((need - outside) / pace)) if pace > 0 else a.steps
    print(f"steps={steps}\nready_kb={int(a.ready_share * peak)}")
    print(f"plan={os.path.basename(a.run)}: ranks up to end {run_s:.1f} s, {a.steps} steps in {loop:.1f} s "
          f"({pace:.3f} s each), {held}: {steps} steps")
    return 0


def held(a):
    t0 = time.monotonic()
    best = 0
    while True:
        s = samples(a.status, a.np)
        if s:
            best = s[-1][1]
            if best >= a.kb:
                break
        if time.monotonic() - t0 >= a.timeout:
            break
        try:
            os.kill(a.pid, 0)
        except ProcessLookupError:
            break
        except PermissionError:
            pass
        time.sleep(0.05)
    print(f"held_wait_s={time.monotonic() - t0:.2f}\nheld_kb={best}\nheld_ok={int(best >= a.kb)}")
    return 0


def check(a):
    meta = read_meta(os.path.join(a.run, "meta.txt"))
    status = os.path.join(a.run, "sampler", "status.csv")
    np = int(meta.get("np", "0") or 0)
    start = float(meta["tool_start_mono_s"]) if "tool_start_mono_s" in meta else None
    traced = float(meta["attach_mono_s"]) if "attach_mono_s" in meta else None
    last = last_seen(status)
    s = samples(status, np)
    out = []
    if start is not None and traced is not None:
        out.append(f"attach_tool_s={traced - start:.2f}")
    elif start is not None and last is not None:
        out += [f"attach_tool_s={max(0.0, last - start):.2f}", "attach_tool_lower=1"]
    outlived = last - traced if traced is not None and last is not None else None
    out.append(f"attach_outlived_s={outlived:.2f}" if outlived is not None else "attach_outlived_s=")
    if start is not None and s:
        before = [v for t, v in s if t <= start]
        peak = max(v for _, v in s)
        if before and peak:
            out.append(f"held_at_attach_pct={100 * before[-1] / peak:.0f}")
    print("\n".join(out))
    return 0 if outlived is not None and outlived >= a.margin else 3


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("size")
    s.add_argument("--run", required=True)
    s.add_argument("--np", type=int, required=True)
    s.add_argument("--steps", type=int, default=0)
    s.add_argument("--fixed", action="store_true")
    s.add_argument("--app-time", type=float, default=0.0)
    s.add_argument("--delay", type=float, required=True)
    s.add_argument("--est", type=float, required=True)
    s.add_argument("--margin", type=float, required=True)
    s.add_argument("--ready-share", type=float, default=0.9)
    h = sub.add_parser("held")
    h.add_argument("--status", required=True)
    h.add_argument("--np", type=int, required=True)
    h.add_argument("--kb", type=int, required=True)
    h.add_argument("--timeout", type=float, required=True)
    h.add_argument("--pid", type=int, required=True)
    c = sub.add_parser("check")
    c.add_argument("--run", required=True)
    c.add_argument("--margin", type=float, required=True)
    a = p.parse_args()
    if a.cmd == "size" and (a.steps <= 0) != a.fixed:
        p.error("--steps above 0, or --fixed")
    return {"size": size, "held": held, "check": check}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
