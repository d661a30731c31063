#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Check what a real Prometheus scraped from `memattr-bpf daemon` against
mpi_truth's own account of what each component holds, plateau by plateau.

    check_prom_truth.py --prom URL --job ID --user NAME --ranks N --log-dir DIR
                        [--tol 0.05] [--floor-kib 512] [--lag 1.2]

The raw samples of memattr_rank_resident_bytes{job=ID} come from
Prometheus's HTTP API (a range selector, so no interpolation). mpi_truth
logs on CLOCK_MONOTONIC, Prometheus stamps with the wall clock: the offset
is read here (same machine). A scrape shows the daemon's figures of up to
one render period plus one sample earlier, so each plateau's window starts
--lag seconds after its first event. As check_truth.py: every component's
resident bytes within --tol of its truth (the first plateau's value plus
the expected growth) plus --floor-kib. Also: every rank has series, all
labelled with the job's user's uid, the job's sums exist, and its info
series names the user. Exits 1 on failure.
"""
import argparse
import json
import pwd
import sys
import time
import urllib.parse
import urllib.request

from check_csv import MIB, mib, read_phase_log
from check_truth import read_expect


def query(prom, expr, at):
    url = f"{prom}/api/v1/query?" + urllib.parse.urlencode({"query": expr, "time": f"{at:.3f}"})
    with urllib.request.urlopen(url, timeout=10) as r:
        body = json.load(r)
    if body.get("status") != "success":
        raise RuntimeError(f"query {expr}: {body}")
    return body["data"]["result"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--prom", required=True)
    ap.add_argument("--job", required=True)
    ap.add_argument("--user", required=True)
    ap.add_argument("--ranks", type=int, required=True)
    ap.add_argument("--log-dir", required=True)
    ap.add_argument("--tol", type=float, default=0.05)
    ap.add_argument("--floor-kib", type=int, default=512)
    ap.add_argument("--lag", type=float, default=1.2)
    ap.add_argument("--prefix", default="truth")
    a = ap.parse_args()

    off = time.time() - time.monotonic()
    now = time.time()
    fails = []
    uid = str(pwd.getpwnam(a.user).pw_uid)
    res = query(a.prom, f'memattr_rank_resident_bytes{{job="{a.job}"}}[30m]', now)
    series = {}
    for s in res:
        m = s["metric"]
        if m.get("uid") != uid or "user" in m:
            fails.append(f"series {m}: expected uid '{uid}' and no user label")
        series[(m["rank"], m["component"])] = [(float(t), float(v)) for t, v in s["values"]]
    ranks = sorted({r for r, _ in series})
    print(f"prometheus: {len(series)} series of job {a.job}, ranks {ranks}")
    job_sums = query(a.prom, f'memattr_job_resident_bytes{{job="{a.job}"}}[30m]', now)
    if not any(s["metric"].get("component") == "total" for s in job_sums):
        fails.append("no memattr_job_resident_bytes{component=\"total\"} for the job")
    info = query(a.prom, f'last_over_time(memattr_job_info{{job="{a.job}",uid="{uid}"}}[30m])', now)
    if [s["metric"].get("user") for s in info] != [a.user]:
        fails.append(f"memattr_job_info of the job: {[s['metric'] for s in info]}, expected user '{a.user}'")

    for rank in range(a.ranks):
        ev, _ = read_phase_log(f"{a.log_dir}/{a.prefix}-rank-{rank}.csv")
        plateaus = read_expect(f"{a.log_dir}/expect-rank-{rank}.csv")
        base, worst, nscrapes = None, {}, 0
        for plateau, first, last, expect in plateaus:
            where = f"rank {rank} {plateau}"
            if first not in ev or last not in ev:
                fails.append(f"{where}: events {first}/{last} missing from the log")
                continue
            lo, hi = ev[first] + off + a.lag, ev[last] + off - 0.05
            got = {}
            for comp in expect:
                pts = [v for t, v in series.get((str(rank), comp), []) if lo <= t <= hi]
                got[comp] = pts
            if not any(got.values()):
                fails.append(f"{where}: no scrape inside the plateau ({hi - lo:.2f} s after margins)")
                continue
            nscrapes += max(len(p) for p in got.values())
            if base is None:
                base = {c: (p[0] if p else 0.0) for c, p in got.items()}
            for comp, grow in expect.items():
                truth = base[comp] + grow
                tol = a.tol * truth + a.floor_kib * 1024
                for val in got[comp] or [0.0]:
                    err = val - truth
                    pct = 100.0 * err / truth if truth >= MIB else 0.0
                    w = worst.setdefault(comp, [0, 0.0])
                    w[0] = max(w[0], abs(err))
                    w[1] = max(w[1], abs(pct))
                    if abs(err) > tol:
                        fails.append(f"{where}: {comp} {mib(val)}, truth {mib(truth)} "
                                     f"(baseline {mib(base[comp])} + {mib(grow)}), tolerance {mib(tol)}")
                        break
        parts = [f"{c} {e / MIB:.2f} MiB / {p:.1f}%" for c, (e, p) in sorted(worst.items())]
        print(f"rank {rank}: {nscrapes} scrapes in {len(plateaus)} plateaus; largest error: "
              + "; ".join(parts))
    for f in fails:
        print(f"FAIL: {f}")
    if fails:
        return 1
    print(f"check_prom_truth: every component within {a.tol * 100:.0f}% (+{a.floor_kib} KiB) "
          f"of its truth in every plateau, as Prometheus scraped it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
