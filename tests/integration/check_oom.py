#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Check an OOM post-mortem (test_oom_postmortem.sh) against what oom_grow
did by construction.

    check_oom.py OUT_DIR --rank R --limit BYTES --cgroup PATH --lib COMPONENT
                 [--app-per-step MIB --lib-per-step MIB]

  * every file is whole (ends with a newline; rank-R.csv rows have the
    header's fields; each sample's components sum to its total);
  * run_info.csv: oom_watched 1, oom_kills 1, kill 1 is rank R with the
    pid of rank-R.csv, a cgroup kill at exactly BYTES in PATH, killed
    after the sample it reports and within the run;
  * the split reported is that of the last sample of rank-R.csv taken
    before the kill exactly (one taken after it, while the victim was
    torn down, may follow in the CSV), and app : lib is app-per-step : lib-per-step (within 20%),
    together at least 60% of the limit;
  * the growth before it: app and the library both grew, in that ratio
    (within 25%), over a window that ends at the last sample;
  * the job's split holds the victim's (the library's is the victim's alone);
  * summary.csv: the victim's rows carry the kill's time and each
    component's growth; nothing else has them.
Prints one line per finding; exits 1 if any check failed.
"""
import argparse
import csv
import os
import sys

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def whole(path):
    with open(path, "rb") as f:
        data = f.read()
    if not data.endswith(b"\n"):
        fail(f"{os.path.basename(path)} does not end with a newline (cut)")
    return data.decode()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--rank", type=int, required=True)
    ap.add_argument("--limit", type=int, required=True)
    ap.add_argument("--cgroup", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--app-per-step", type=float, default=2)
    ap.add_argument("--lib-per-step", type=float, default=1)
    a = ap.parse_args()
    ratio = a.app_per_step / a.lib_per_step

    info = {}
    for row in csv.reader(whole(os.path.join(a.out, "run_info.csv")).splitlines()[1:]):
        info[row[0]] = ",".join(row[1:])
    rows = list(csv.reader(whole(os.path.join(a.out, f"rank-{a.rank}.csv")).splitlines()))
    hdr = rows[0]
    samples = {}
    for r in rows[1:]:
        if len(r) != len(hdr):
            fail(f"rank-{a.rank}.csv row {r}: {len(r)} fields, header has {len(hdr)}")
            continue
        samples.setdefault(r[0], {})[r[3]] = int(r[4])
    for t, comps in samples.items():
        if sum(v for k, v in comps.items() if k != "total") != comps.get("total"):
            fail(f"rank-{a.rank}.csv at {t}: components do not sum to total")
    pids = {r[2] for r in rows[1:]}

    def get(k):
        if k not in info:
            fail(f"run_info.csv has no {k}")
            return ""
        return info[k]

    def num(k):
        v = get(k)
        try:
            return float(v)
        except ValueError:
            fail(f"run_info.csv {k}={v!r} is not a number")
            return float("nan")

    if get("oom_watched") != "1":
        fail("oom_watched is not 1: the kernel side did not attach oom:mark_victim")
    if get("oom_kills") != "1":
        fail(f"oom_kills={get('oom_kills')}, expected 1")
    k = "oom_kill_1_"
    if get(k + "rank") != str(a.rank):
        fail(f"killed rank {get(k + 'rank')!r}, expected {a.rank}")
    if pids != {get(k + "pid")}:
        fail(f"killed pid {get(k + 'pid')}, rank-{a.rank}.csv has {sorted(pids)}")
    if get(k + "kind") != "cgroup":
        fail(f"kind {get(k + 'kind')!r}, expected cgroup")
    if int(num(k + "limit_bytes")) != a.limit:
        fail(f"limit_bytes {get(k + 'limit_bytes')}, expected {a.limit}")
    if get(k + "cgroup") != a.cgroup:
        fail(f"cgroup {get(k + 'cgroup')!r}, expected {a.cgroup!r}")
    t_kill, t_sample = num(k + "time_s"), num(k + "sample_time_s")
    # The kill is read from the ring after it happened: a sample taken
    # meanwhile, of a process being torn down, may follow it in the CSV.
    # The post-mortem is of the last sample before the kill (times are
    # printed to the millisecond, samples are further apart).
    last_t = min(samples, key=lambda t: abs(float(t) - t_sample))
    last = samples[last_t]
    if abs(t_sample - float(last_t)) > 0.0015:
        fail(f"sample_time_s {t_sample} is no sample of rank-{a.rank}.csv")
    skipped = [t for t in samples if t_sample + 0.0015 < float(t) < t_kill - 0.001]
    if skipped:
        fail(f"sample_time_s {t_sample} is not the last sample before the kill: {skipped}")
    if not (t_sample <= t_kill + 0.001 and t_kill <= num("duration_s") + 0.001):
        fail(f"time_s {t_kill} is not between the last sample ({t_sample}) and the run's end")
    after = [t for t in samples if float(t) > t_kill + 0.001]
    if after:
        print(f"rank-{a.rank}.csv has {len(after)} sample(s) after the kill, from {min(after, key=float)} s")

    for comp in ["total", "app", a.lib]:
        rec = num(f"{k}rss_bytes:{comp}")
        if rec != last.get(comp):
            fail(f"rss_bytes:{comp} {rec:.0f} but the last sample's is {last.get(comp)}")
        job = num(f"{k}job_rss_bytes:{comp}")
        # The launching runuser is of the job too: its own app and libc.
        if job < rec or (comp == a.lib and job != rec):
            fail(f"job_rss_bytes:{comp} {job:.0f} against the victim's {rec:.0f}")
    app, lib = num(k + "rss_bytes:app"), num(f"{k}rss_bytes:{a.lib}")
    print(f"last sample {t_sample:.3f} s, kill {t_kill:.3f} s: app {app / 2**20:.1f} MiB, "
          f"{a.lib} {lib / 2**20:.1f} MiB (limit {a.limit / 2**20:.0f} MiB)")
    if not lib or abs(app / lib - ratio) > 0.2 * ratio:
        fail(f"app : {a.lib} at the last sample is {app / max(lib, 1):.2f}, expected {ratio:.2f}")
    if app + lib < 0.6 * a.limit:
        fail(f"app + {a.lib} at the last sample is {(app + lib) / 2**20:.1f} MiB, not near the limit")
    gapp, glib, win = num(k + "growth_bytes:app"), num(f"{k}growth_bytes:{a.lib}"), num(k + "window_s")
    print(f"growth over {win:.2f} s before it: app +{gapp / 2**20:.1f} MiB, {a.lib} +{glib / 2**20:.1f} MiB")
    if win <= 0 or gapp <= 0 or glib <= 0:
        fail(f"no growth recorded (window {win}, app {gapp}, lib {glib})")
    elif abs(gapp / glib - ratio) > 0.25 * ratio:
        fail(f"growth app : {a.lib} is {gapp / glib:.2f}, expected {ratio:.2f}")

    srows = list(csv.DictReader(whole(os.path.join(a.out, "summary.csv")).splitlines()))
    for r in srows:
        victim = r["pid"] == get(k + "pid")
        if not victim and (r["oom_kill_time_s"] or r["oom_growth_bytes"]):
            fail(f"summary.csv row of pid {r['pid']} ({r['component']}) has oom fields")
        if victim:
            if abs(float(r["oom_kill_time_s"] or "nan") - t_kill) > 0.0015:
                fail(f"summary.csv {r['component']}: oom_kill_time_s {r['oom_kill_time_s']!r}")
            want = info.get(f"{k}growth_bytes:{r['component']}")
            if want is not None and r["oom_growth_bytes"] != want:
                fail(f"summary.csv {r['component']}: oom_growth_bytes {r['oom_growth_bytes']}, run_info {want}")
    if not any(r["pid"] == get(k + "pid") for r in srows):
        fail("summary.csv has no row of the killed process")
    print("check_oom: " + ("%d failure(s)" % len(failures) if failures else "all checks passed"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
