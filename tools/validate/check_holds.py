#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Self-check of table.py's comparisons: inside holds (run.sh --hold-every),
on a made-up run: exit 0 when only the samples inside the holds' windows
are compared, 1 otherwise. No root, no tool: `make validate-check`.

The fixture: two tools whose clocks start 0.375 s apart (their run_info.csv
start_time_unix_s), two holds; inside a hold's window the sampled tool is off
by IN_ERR of `total` in two components; everywhere else (outside the holds,
in a hold before its lead or after its tail, the exact tool's first sample
of a hold, which still misses records of before the stop) it is off by
FAR_ERR or more; one pair inside a hold has a different `total`.
Mutations of table.py checked to fail it: compare_held without the tools'
start times (time_s alone), with lead 0 or tail 0, without the `total` check,
with the hold windows ignored (every sample compared). And a run whose exact
tool lost records (run_info's job_dropped_events) must say it has no
reference, not met or failed (checked: no_reference() returning the verdict
as it is fails it).

And of its every-sample comparison (compare_phase): exit 1 as well when a
sample taken while the rank grows is not compared against the exact tool's
two samples around it.

The fixture: a rank that loads its libraries (libc first, then MPI: the
components do not grow in proportion) and then fills 40 MiB of `app` in
0.4 s, sampled by the exact tool every 0.1 s and by the sampled tool
every 0.1 s, 0.05 s later, whose clock starts 0.375 s apart. The sampled
tool is right everywhere but at one sample mid-growth, where MISSED of its
`total` is `unattributed` instead of `app` (what a count that the rank
outran leaves); and one sample lies before the exact tool's first. The
exact tool is behind at one sample (what the rank filled since its sample
before is `unattributed` there): the sampled tool's right figures around it
must not count as errors.
Mutations of table.py checked to fail it: compare_phase without the tools'
start times (time_s alone), with the exact sample nearest in time instead
of the pair whose totals bracket (the growth shows as error everywhere),
with the value interpolated by `total` instead of the pair's range (the
libraries' order shows as error), without the bracket test (the sample
before the exact tool's first is compared), without the exact tool's
`unattributed` widening the other components' range.
"""
import csv
import importlib.util
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("v_table", os.path.join(HERE, "table.py"))
table = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(table)

E0, S0 = 1000.0, 1000.375           # the tools' time 0, unix seconds
HOLDS = [(1, 1000.98, 1001.52), (2, 1002.98, 1003.52)]
IN_ERR, FAR_ERR = 0.01, 0.30
MIB = 1 << 20
P_E0, P_S0 = 1000.0, 999.625        # the tools' time 0, unix seconds (every-sample check)
MISSED = 0.10
BAD_AT = 1000.775                   # unix time of the sampled tool's wrong sample
BEHIND_AT = 1000.6                  # unix time of the exact tool's sample that is behind




def held(u):
    return next((h for h, a, b in HOLDS if a <= u <= b), None)


def in_window(u):
    return any(a + table.HOLD_LEAD <= u <= b - table.HOLD_TAIL for _, a, b in HOLDS)


def state(u):
    """The memory at unix time u: still inside a hold, moving outside."""
    h = held(u)
    tot = 100 * MIB + (h or 0) * MIB if h else 60 * MIB + int((u * 7919) % 40) * MIB
    return tot, {"app": tot // 2, "mpi": tot // 4, "unattributed": tot - tot // 2 - tot // 4}


def write(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["time_s", "rank", "pid", "component", "rss_bytes", "pss_bytes"])
        for t, tot, comps in rows:
            w.writerow([f"{t:.3f}", 0, 42, "total", tot, tot])
            for c, v in comps.items():
                w.writerow([f"{t:.3f}", 0, 42, c, v, v])


def shifted(tot, comps, err):
    d = int(err * tot)
    return dict(comps, mpi=comps["mpi"] + d, unattributed=comps["unattributed"] - d)


def fixture(d):
    run = os.path.join(d, "runs", "lulesh-openmpi-np1-sampled")
    for sub in ("tool", "tool_sampled"):
        os.makedirs(os.path.join(run, sub))
    with open(os.path.join(run, "meta.txt"), "w") as f:
        f.write("app=lulesh\nmpi=openmpi\nnp=1\nmode=sampled\nstatus=ok\n")
    with open(os.path.join(run, "holds.csv"), "w") as f:
        f.write("hold,start_unix_s,end_unix_s,ranks,settle_s\n")
        for h, a, b in HOLDS:
            f.write(f"{h},{a:.6f},{b:.6f},1,0.001\n")
    for sub, t0 in (("tool", E0), ("tool_sampled", S0)):
        with open(os.path.join(run, sub, "run_info.csv"), "w") as f:
            f.write(f"modes,x\nstart_time_unix_s,{t0:.6f}\n")
    exact, sampled = [], []
    for k in range(41):
        t = k / 10
        u = E0 + t
        tot, comps = state(u)
        first = held(u) and not any(held(E0 + j / 10) == held(u) for j in range(k))
        # The exact tool's first sample of a hold: records of before the stop not read yet.
        exact.append((t, tot, shifted(tot, comps, FAR_ERR) if first else comps))
    expect, mismatch = 0, 0
    for k in range(37):
        t = k / 10
        u = S0 + t
        tot, comps = state(u)
        if not held(u):
            # A moving rank: the tools' instants differ, and so do their totals.
            sampled.append((t, tot + 3 * MIB, shifted(tot, comps, FAR_ERR)))
        elif not in_window(u):
            # Held, but before the lead or after the tail: same total, wrong components
            # (a round whose reads straddle the continue; the exact tool's stale first sample).
            sampled.append((t, tot, shifted(tot, comps, FAR_ERR)))
        elif held(u) == 2 and not mismatch:
            mismatch += 1
            sampled.append((t, tot + 5 * MIB, shifted(tot, comps, FAR_ERR)))
        else:
            expect += 1
            sampled.append((t, tot, shifted(tot, comps, IN_ERR)))
    write(os.path.join(run, "tool", "rank-0.csv"), exact)
    write(os.path.join(run, "tool_sampled", "rank-0.csv"), sampled)
    return run, expect, mismatch, len(sampled)


def phase_truth(u):
    """The rank at unix time u: its executable by 1000.0, libc by 1000.15, MPI by 1000.5, then app
    to 40 MiB by 1000.9."""
    libc = int(2 * MIB * min(1.0, max(0.0, (u - 1000.0) / 0.15)))
    mpi = int(8 * MIB * min(1.0, max(0.0, (u - 1000.15) / 0.35)))
    app = int(MIB // 8 * min(1.0, max(0.0, (u - 999.9) / 0.1)))
    app += int(40 * MIB * min(1.0, max(0.0, (u - 1000.5) / 0.4)))
    comps = {"app": app, "mpi": mpi, "libc": libc, "unattributed": 0}
    return dict(comps, total=sum(comps.values()))


def phase_timeline(t0, first, last, shift=0.0):
    return [(k / 10 + shift, phase_truth(t0 + k / 10 + shift)) for k in range(first, last)]


def check_phase():
    """compare_phase on the growing rank: a list of what is wrong."""
    bad = []
    exact = phase_timeline(P_E0, 0, 20)
    # The exact tool behind at one sample: what the rank filled since the one before is unattributed.
    k = next(i for i, (t, _) in enumerate(exact) if abs(t + P_E0 - BEHIND_AT) < 1e-6)
    late = exact[k][1]["app"] - exact[k - 1][1]["app"]
    exact[k] = (exact[k][0], dict(exact[k][1], app=exact[k - 1][1]["app"], unattributed=late))
    sampled = []
    for t, v in phase_timeline(P_S0, 3, 24, 0.05):
        if abs(t + P_S0 - BAD_AT) < 1e-6:
            d = int(MISSED * v["total"])
            v = dict(v, app=v["app"] - d, unattributed=d)
        sampled.append((t, v))
    at = []
    n, total, worst = table.compare_phase(exact, sampled, P_E0, P_S0, at)
    if n != total - 1:
        bad.append(f"compared {n} of {total} samples: all but the one before the exact tool's first")
    if abs(worst.get("unattributed", 0) - MISSED) > 1e-3:
        bad.append(f"unattributed: largest error {worst.get('unattributed', 0):.4f}, the fixture's is {MISSED}")
    top = max(at) if at else (0, "", 0)
    if abs(top[2] + P_S0 - BAD_AT) > 1e-6:
        bad.append(f"largest error at sampled time_s {top[2]:.3f}, not at the wrong sample's")
    others = [e for e, c, t in at if abs(t + P_S0 - BAD_AT) > 1e-6]
    if max(others, default=0) > 1e-9:
        bad.append(f"error {max(others):.4f} at a sample where the tools agree")
    return bad


def main():
    bad = []
    with tempfile.TemporaryDirectory(prefix="check_holds.") as d:
        run, expect, mismatch, n = fixture(d)
        r = table.compare_held(table.read_timeline(os.path.join(run, "tool", "rank-0.csv")),
                               table.read_timeline(os.path.join(run, "tool_sampled", "rank-0.csv")),
                               table.start_unix(os.path.join(run, "tool")),
                               table.start_unix(os.path.join(run, "tool_sampled")),
                               table.read_holds(os.path.join(run, "holds.csv")))
        if expect < 4 or not mismatch:
            bad.append(f"fixture too small: {expect} samples in windows, {mismatch} mismatch")
        if r["compared"] != expect:
            bad.append(f"compared {r['compared']} samples, {expect} lie inside the holds' windows")
        if r["mismatch"] != mismatch:
            bad.append(f"{r['mismatch']} pairs left out for their total, the fixture has {mismatch}")
        if r["holds"] != len(HOLDS):
            bad.append(f"pairs in {r['holds']} holds, not {len(HOLDS)}")
        for c in ("mpi", "unattributed"):
            if abs(r["worst"].get(c, 0) - IN_ERR) > 1e-6:
                bad.append(f"{c}: largest error {r['worst'].get(c, 0):.4f}, the fixture's in-hold error is {IN_ERR}")
        if r["worst"].get("app", 0) > 1e-9:
            bad.append(f"app: error {r['worst']['app']:.4f} where the tools agree")
        rows = table.sampled_vs_exact(os.path.join(d, "runs"))
        want = f"| {expect} / {n} in {len(HOLDS)} of {len(HOLDS)} holds ({mismatch} left out"
        if not any(want in x for x in rows):
            bad.append(f"table row lacks '{want}': {rows[-1] if rows else 'no rows'}")
        if not os.path.exists(os.path.join(run, "sampled_vs_exact.csv")):
            bad.append("no sampled_vs_exact.csv")
        if any("no reference" in x for x in rows if x.startswith("| lulesh")):
            bad.append("a run whose exact tool lost no record marked as having no reference")
        # The exact tool lost records: no reference, the run neither meets nor fails the goal.
        with open(os.path.join(run, "tool", "run_info.csv"), "a") as f:
            f.write("job_dropped_events,12\n")
        row = [x for x in table.sampled_vs_exact(os.path.join(d, "runs")) if x.startswith("| lulesh")]
        if not row or "**no reference**: the exact tool lost 12 records" not in row[-1] or \
                row[-1].endswith(("| yes |", "| **no** |")):
            bad.append(f"the exact tool's lost records not marked: {row[-1] if row else 'no row'}")
    phase = check_phase()
    for b in bad + phase:
        print(f"check_holds: FAIL: {b}", file=sys.stderr)
    if not bad:
        print(f"check_holds: holds ok ({expect} of {n} samples compared, {mismatch} left out for their total)")
    if not phase:
        print("check_holds: every sample ok (the wrong sample of the growing rank found, none other)")
    bad += phase
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
