#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Self-check of table.py's every-sample comparison (compare_phase), on a
made-up run: exit 0 when a sample taken while the rank grows is compared
against the exact tool's two samples around it, 1 otherwise. No root, no
tool: `make validate-check`.

The fixture: a rank that loads its libraries (libc first, then MPI: the
components do not grow in proportion) and then fills 40 MiB of `app` in
0.4 s, sampled by the exact tool every 0.1 s and by the sampled tool
every 0.1 s, 0.05 s later, whose clock starts 0.375 s apart. The sampled
tool is right everywhere but at one sample mid-growth, where MISSED of its
`total` is `unattributed` instead of `app` (what a count that the rank
outran leaves); and one sample lies before the exact tool's first.
Mutations of table.py checked to fail it: compare_phase without the tools'
start times (time_s alone), with the exact sample nearest in time instead
of the pair whose totals bracket (the growth shows as error everywhere),
with the value interpolated by `total` instead of the pair's range (the
libraries' order shows as error), without the bracket test (the sample
before the exact tool's first is compared).
"""
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("v_table", os.path.join(HERE, "table.py"))
table = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(table)

E0, S0 = 1000.0, 999.625            # the tools' time 0, unix seconds
MIB = 1 << 20
MISSED = 0.10
BAD_AT = 1000.775                   # unix time of the sampled tool's wrong sample


def truth(u):
    """The rank at unix time u: its executable by 1000.0, libc by 1000.15, MPI by 1000.5, then app
    to 40 MiB by 1000.9."""
    libc = int(2 * MIB * min(1.0, max(0.0, (u - 1000.0) / 0.15)))
    mpi = int(8 * MIB * min(1.0, max(0.0, (u - 1000.15) / 0.35)))
    app = int(MIB // 8 * min(1.0, max(0.0, (u - 999.9) / 0.1)))
    app += int(40 * MIB * min(1.0, max(0.0, (u - 1000.5) / 0.4)))
    comps = {"app": app, "mpi": mpi, "libc": libc, "unattributed": 0}
    return dict(comps, total=sum(comps.values()))


def timeline(t0, first, last, shift=0.0):
    return [(k / 10 + shift, truth(t0 + k / 10 + shift)) for k in range(first, last)]


def main():
    bad = []
    exact = timeline(E0, 0, 20)
    sampled = []
    for t, v in timeline(S0, 3, 24, 0.05):
        if abs(t + S0 - BAD_AT) < 1e-6:
            d = int(MISSED * v["total"])
            v = dict(v, app=v["app"] - d, unattributed=d)
        sampled.append((t, v))
    at = []
    n, total, worst = table.compare_phase(exact, sampled, E0, S0, at)
    if n != total - 1:
        bad.append(f"compared {n} of {total} samples: all but the one before the exact tool's first")
    if abs(worst.get("unattributed", 0) - MISSED) > 1e-3:
        bad.append(f"unattributed: largest error {worst.get('unattributed', 0):.4f}, the fixture's is {MISSED}")
    top = max(at) if at else (0, "", 0)
    if abs(top[2] + S0 - BAD_AT) > 1e-6:
        bad.append(f"largest error at sampled time_s {top[2]:.3f}, not at the wrong sample's")
    others = [e for e, c, t in at if abs(t + S0 - BAD_AT) > 1e-6]
    if max(others, default=0) > 1e-9:
        bad.append(f"error {max(others):.4f} at a sample where the tools agree")
    for b in bad:
        print(f"check_phase: FAIL: {b}", file=sys.stderr)
    if not bad:
        print(f"check_phase: ok ({n} of {total} samples compared, the wrong one found)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
