#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Check memattr-bpf's output directory against its CSV contract and against
independent ground truth (the /proc sampler and the workloads' phase logs).

    check_csv.py OUT_DIR --ranks N [--sampler FILE] [--phase-dir DIR
                 --malloc-mib M --mmap-mib M [--alloc-mem-mib A]] [--hold-mib N]
                 [--t-line MONO]

Contract checks (always):
  * rank-0..N-1.csv and summary.csv exist, are regular files, not
    world-writable, non-empty, end with a newline, and have the headers;
  * every row has 6+ columns, rank matches the file, one pid per file,
    component is total/app/mpi/libc/stack/unattributed/lib:<name>, no
    negative bytes, time_s never goes backwards;
  * per sample (rows sharing time_s): exactly one total row, no duplicate
    component, the other components' rss_bytes sum exactly to total's, and
    pss_bytes likewise;
  * summary.csv has a total row per rank whose peak/final values agree with
    the rank file; no component's summary peak is below what its rows show.
Ground truth checks (when given):
  * --sampler: each rank's peak total rss is within --peak-tol (3%) of the
    largest VmRSS the sampler saw; the pid is the rank's real pid;
  * --phase-dir (mpi_phases logs): in every plateau, app, mpi and total rss
    have grown over the pre-phase baseline by exactly what the rank holds
    ((R+1)*M MiB malloc and (R+1)*M' MiB mmap: app; (R+1)*A MiB
    MPI_Alloc_mem: mpi) within 1 MiB + 2%, and total matches the sampler's
    VmRSS of the same plateau within 1%;
  * --hold-mib: at the last sample each rank's app rss holds >= 97% of N MiB.
Prints one line per rank, then every failure; exits 1 if any check failed.
"""
import argparse
import bisect
import csv
import os
import re
import stat
import sys
from collections import defaultdict

RANK_HEADER = ["time_s", "rank", "pid", "component", "rss_bytes", "pss_bytes"]
SUMMARY_HEADER = ["rank", "pid", "component", "peak_rss_bytes", "peak_rss_time_s",
                  "peak_pss_bytes", "peak_pss_time_s", "final_rss_bytes",
                  "final_pss_bytes"]
FIXED_COMPONENTS = {"total", "app", "mpi", "libc", "stack", "unattributed"}
LIB_RE = re.compile(r"^lib:[^,\s/]+$")
MIB = 1024 * 1024

# How far the kernel's own figures of a process's RSS may be from its
# pages: each of its three resident counters (anon, file, shmem) keeps a
# slot per CPU that reaches the shared count a batch at a time (32 pages
# here), and the mm's VmHWM is taken from those shared counts at unmaps.
# Twice that: the tool's peak (anchored on VmRSS) and the kernel's each
# may be off by it. test_peak_between_samples.sh uses it too.
COUNTER_SLACK = 2 * 3 * 32 * (os.cpu_count() or 1) * 4096

# Plateau windows of mpi_phases: (name, first event, last event, held by the
# application, held by MPI), holdings as (malloc, mmap, alloc_mem) block
# counts, sizes multiplied by (rank + 1). The last event of "after-munmap"
# is alloc_mem_begin when the optional MPI_Alloc_mem phase ran, else end.
PLATEAUS = [
    ("baseline", "start", "malloc_begin", (0, 0, 0), (0, 0, 0)),
    ("after-malloc", "malloc_done", "mmap_begin", (1, 0, 0), (0, 0, 0)),
    ("after-mmap", "mmap_done", "free_begin", (1, 1, 0), (0, 0, 0)),
    ("after-free", "free_done", "munmap_begin", (0, 1, 0), (0, 0, 0)),
    ("after-munmap", "munmap_done", "end", (0, 0, 0), (0, 0, 0)),
    ("after-alloc-mem", "alloc_mem_done", "free_mem_begin", (0, 0, 0), (0, 0, 1)),
    ("after-free-mem", "free_mem_done", "end", (0, 0, 0), (0, 0, 0)),
]


def plateaus_for(ev):
    """The plateaus this run went through, with their real end events."""
    out = []
    for name, first, last, app, mpi in PLATEAUS:
        if first not in ev:
            continue
        if name == "after-munmap" and "alloc_mem_begin" in ev:
            last = "alloc_mem_begin"
        out.append((name, first, last, app, mpi))
    return out


class Checker:
    def __init__(self):
        self.failures = []
        self.notes = []

    def fail(self, where, msg):
        self.failures.append(f"{where}: {msg}")

    def note(self, where, msg):
        self.notes.append(f"{where}: {msg}")


def mib(b):
    return f"{b / MIB:.2f} MiB"


def component_ok(name):
    return name in FIXED_COMPONENTS or bool(LIB_RE.match(name))


def check_file_basics(ck, path):
    """Regular file, not world-writable, non-empty, ends with a newline."""
    name = os.path.basename(path)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        ck.fail(name, "missing")
        return False
    if not stat.S_ISREG(st.st_mode):
        ck.fail(name, f"not a regular file (mode {stat.filemode(st.st_mode)})")
        return False
    if st.st_mode & stat.S_IWOTH:
        ck.fail(name, f"world-writable (mode {stat.filemode(st.st_mode)})")
    if st.st_size == 0:
        ck.fail(name, "empty")
        return False
    with open(path, "rb") as f:
        f.seek(-1, os.SEEK_END)
        if f.read(1) != b"\n":
            ck.fail(name, "last line is incomplete (no trailing newline)")
    return True


def parse_int(ck, where, s, field):
    try:
        v = int(s)
    except ValueError:
        ck.fail(where, f"{field} '{s}' is not an integer")
        return None
    if v < 0:
        ck.fail(where, f"{field} is negative ({v})")
    return v


def parse_float(ck, where, s, field):
    try:
        return float(s)
    except ValueError:
        ck.fail(where, f"{field} '{s}' is not a number")
        return None


def read_rank_file(ck, path, rank):
    """Returns (pid, samples) with samples = [(time_s, {component: (rss, pss)})]."""
    name = os.path.basename(path)
    if not check_file_basics(ck, path):
        return None, []
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if not rows or rows[0][:6] != RANK_HEADER:
        ck.fail(name, f"header {rows[0] if rows else None} does not start with {RANK_HEADER}")
        return None, []
    if len(rows[0]) > 6:
        ck.note(name, f"extra columns {rows[0][6:]}")
    pids = set()
    samples = []          # in file order, grouped by the time_s text
    index = {}
    bad_rows = 0
    for lineno, row in enumerate(rows[1:], start=2):
        where = f"{name}:{lineno}"
        if len(row) < 6:
            ck.fail(where, f"{len(row)} columns, need 6+: {row}")
            bad_rows += 1
            continue
        t = parse_float(ck, where, row[0], "time_s")
        r = parse_int(ck, where, row[1], "rank")
        p = parse_int(ck, where, row[2], "pid")
        comp = row[3]
        rss = parse_int(ck, where, row[4], "rss_bytes")
        pss = parse_int(ck, where, row[5], "pss_bytes")
        if None in (t, r, p, rss, pss):
            bad_rows += 1
            continue
        if t < 0:
            ck.fail(where, f"time_s is negative ({t})")
        if r != rank:
            ck.fail(where, f"rank {r} in the file of rank {rank}")
        pids.add(p)
        if not component_ok(comp):
            ck.fail(where, f"unknown component '{comp}'")
        key = row[0]
        if key not in index:
            index[key] = len(samples)
            samples.append((t, {}, lineno))
        comps = samples[index[key]][1]
        if comp in comps:
            ck.fail(where, f"component '{comp}' twice at time_s {key}")
        comps[comp] = (rss, pss)
        if bad_rows > 20:
            ck.fail(name, "too many bad rows, giving up on this file")
            break
    if len(pids) > 1:
        ck.fail(name, f"several pids in one rank file: {sorted(pids)}")
    if not samples:
        ck.fail(name, "no data rows")
    return (min(pids) if pids else None), samples


def check_samples(ck, name, samples):
    """Partition and ordering checks; returns the number of bad samples."""
    bad = 0
    prev_t = None
    for t, comps, lineno in samples:
        where = f"{name}:{lineno} (time_s {t})"
        if prev_t is not None and t < prev_t:
            ck.fail(where, f"time_s goes backwards (previous {prev_t})")
        prev_t = t
        if "total" not in comps:
            ck.fail(where, "no total row in this sample")
            bad += 1
            continue
        trss, tpss = comps["total"]
        srss = sum(v[0] for c, v in comps.items() if c != "total")
        spss = sum(v[1] for c, v in comps.items() if c != "total")
        if srss != trss or spss != tpss:
            bad += 1
            if bad <= 3:
                ck.fail(where, f"components sum to rss {srss} pss {spss}, total row says "
                        f"rss {trss} pss {tpss} (rss off by {srss - trss}, pss off by "
                        f"{spss - tpss})")
    if bad > 3:
        ck.fail(name, f"{bad} of {len(samples)} samples do not sum to total")
    return bad


def read_summary(ck, path):
    """Returns {(rank or pid-string, component): dict of the row}."""
    name = os.path.basename(path)
    if not check_file_basics(ck, path):
        return {}
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if not rows or rows[0][:9] != SUMMARY_HEADER:
        ck.fail(name, f"header {rows[0] if rows else None} is not {SUMMARY_HEADER}")
        return {}
    if len(rows[0]) > 9:
        ck.note(name, f"extra columns {rows[0][9:]}")
    out = {}
    for lineno, row in enumerate(rows[1:], start=2):
        where = f"{name}:{lineno}"
        if len(row) < 9:
            ck.fail(where, f"{len(row)} columns, need 9: {row}")
            continue
        # Every column, the extra ones too (peak_source decides what the
        # total's peak may be): zip over the file's own header.
        rec = dict(zip(rows[0], row))
        if not component_ok(rec["component"]):
            ck.fail(where, f"unknown component '{rec['component']}'")
        for fld in ("peak_rss_bytes", "peak_pss_bytes", "final_rss_bytes", "final_pss_bytes"):
            rec[fld] = parse_int(ck, where, rec[fld], fld)
        for fld in ("peak_rss_time_s", "peak_pss_time_s"):
            rec[fld] = parse_float(ck, where, rec[fld], fld)
        rec["line"] = lineno
        # A traced process that is not a rank has an empty rank: key it by pid.
        key = (rec["rank"] or f"pid-{rec['pid']}", rec["component"])
        if key in out:
            ck.fail(where, f"duplicate summary row for rank {rec['rank']} {rec['component']}")
        out[key] = rec
    return out


def check_summary_for_rank(ck, rank, pid, samples, summary):
    """The summary's total row must agree with the rank file; components'
    peaks may not be lower than what the rows show."""
    where = f"summary.csv rank {rank}"
    tot = summary.get((str(rank), "total"))
    if tot is None:
        ck.fail(where, "no total row")
        return
    if pid is not None and tot["pid"] != str(pid):
        ck.fail(where, f"pid {tot['pid']} but rank file has pid {pid}")
    if not samples:
        return
    from_events = tot.get("peak_source") == "events"
    kernel_hwm = int(tot.get("kernel_hwm_bytes") or 0)
    last = samples[-1][1].get("total")
    for comp in sorted({c for _, comps, _ in samples for c in comps}):
        rec = summary.get((str(rank), comp))
        if rec is None:
            ck.fail(where, f"no row for component '{comp}' that rank-{rank}.csv has")
            continue
        series = [(t, comps[comp]) for t, comps, _ in samples if comp in comps]
        max_rss = max(v[0] for _, v in series)
        max_pss = max(v[1] for _, v in series)
        for kind, peak, mx, tfield in (("rss", rec["peak_rss_bytes"], max_rss, "peak_rss_time_s"),
                                       ("pss", rec["peak_pss_bytes"], max_pss, "peak_pss_time_s")):
            if peak is None:
                continue
            if peak < mx:
                ck.fail(where, f"{comp} peak_{kind}_bytes {peak} is below the rank file's "
                        f"largest {kind} {mx}")
            elif comp == "total" and peak > mx * 1.03 and not from_events:
                ck.fail(where, f"total peak_{kind}_bytes {peak} exceeds the rank file's "
                        f"largest {kind} {mx} by more than 3%")
            elif comp == "total" and kind == "rss" and from_events and \
                    peak > max(mx, kernel_hwm) + COUNTER_SLACK:
                # The peak the RSS changes reached, between samples too
                # (issue 32), is never above what the kernel held at most.
                ck.fail(where, f"total peak_rss_bytes {peak} (from events) exceeds both the "
                        f"largest sample {mx} and the kernel's VmHWM {kernel_hwm} by more "
                        f"than the counters' slack {COUNTER_SLACK}")
            elif comp == "total" and peak > mx:
                # test_peak_between_samples.sh holds it to VmHWM more closely.
                ck.note(where, f"total peak_{kind} {peak} > largest sampled {mx} "
                        "(peak tracked between samples)")
            t = rec[tfield]
            if t is not None and comp == "total":
                # From events, the peak may come after the last sample (the exit's).
                late = 1.0 if from_events else 0
                if t < samples[0][0] - 1e-6 or t > samples[-1][0] + late + 1e-6:
                    ck.fail(where, f"{tfield} {t} outside the sampled span "
                            f"[{samples[0][0]}, {samples[-1][0]}]")
                at = [v for tt, v in series if abs(tt - t) < 1e-6]
                idx = 0 if kind == "rss" else 1
                if at and peak == mx and at[0][idx] != peak:
                    ck.fail(where, f"{tfield} {t} but the row at that time has {kind} "
                            f"{at[0][idx]}, not the peak {peak}")
    if last is not None:
        if tot["final_rss_bytes"] is not None and tot["final_rss_bytes"] != last[0]:
            ck.fail(where, f"final_rss_bytes {tot['final_rss_bytes']} but the last sample's "
                    f"total rss is {last[0]}")
        if tot["final_pss_bytes"] is not None and tot["final_pss_bytes"] != last[1]:
            ck.fail(where, f"final_pss_bytes {tot['final_pss_bytes']} but the last sample's "
                    f"total pss is {last[1]}")


def read_sampler(path):
    """{pid: [(mono_s, vmrss_bytes, vmhwm_bytes)]} and {pid: rank}."""
    data = defaultdict(list)
    ranks = {}
    with open(path, newline="") as f:
        r = csv.reader(f)
        next(r, None)
        for row in r:
            if len(row) < 5:
                continue  # the sampler was killed mid-line
            pid = int(row[1])
            ranks[pid] = int(row[2])
            data[pid].append((float(row[0]), int(row[3]) * 1024, int(row[4]) * 1024))
    return data, ranks


def read_phase_log(path):
    ev = {}
    pid = None
    with open(path, newline="") as f:
        for rec in csv.DictReader(f):
            ev[rec["event"]] = float(rec["mono_s"])
            pid = int(rec["pid"])
    return ev, pid


def estimate_origin(samples, ev, jump):
    """CLOCK_MONOTONIC time of time_s 0, from the first sample whose total
    rss is `jump` above the first sample: the malloc phase's page touching
    happened between that sample and the previous one, and inside
    [malloc_begin, malloc_done]. Returns (origin, uncertainty) or None."""
    base = samples[0][1]["total"][0]
    for i in range(1, len(samples)):
        if samples[i][1]["total"][0] - base >= jump:
            lo = ev["malloc_begin"] - samples[i][0]
            hi = ev["malloc_done"] - samples[i - 1][0]
            if hi < lo:
                lo, hi = hi, lo
            return (lo + hi) / 2, (hi - lo) / 2
    return None


def origin_from_sampler(samples, series, t_line):
    """CLOCK_MONOTONIC time of time_s 0 that best lines up the tool's total
    rss with the sampler's VmRSS (the phases make the shape distinctive).
    Returns (origin, uncertainty) or None when they barely overlap."""
    ms = [m for m, _, _ in series]
    vs = [v for _, v, _ in series]
    pts = [(t, c["total"][0]) for t, c, _ in samples if "total" in c]
    if len(pts) < 5 or len(ms) < 5:
        return None
    if t_line is not None:
        lo, hi = t_line - 10.0, t_line + 2.0
    else:
        lo, hi = ms[0] - pts[-1][0], ms[-1] - pts[0][0]

    def cost(o):
        tot = n = 0
        for t, v in pts:
            i = bisect.bisect_right(ms, o + t) - 1
            if i < 0 or o + t > ms[-1]:
                continue
            tot += abs(v - vs[i])
            n += 1
        return tot / n if n >= len(pts) // 2 else float("inf")

    def scan(a, b, step):
        best = []
        o = a
        while o <= b:
            best.append((cost(o), o))
            o += step
        m = min(best)[0]
        near = [o for c, o in best if c <= m * 1.001 + 1]
        return near[len(near) // 2], m

    o, _ = scan(lo, hi, 0.02)
    o, m = scan(o - 0.03, o + 0.03, 0.002)
    if m == float("inf"):
        return None
    return o, 0.05


def check_phases(ck, rank, samples, ev, sampler_series, sizes_mib, margin, t_line=None):
    """Plateau-by-plateau comparison against what mpi_phases holds.
    sizes_mib: (malloc, mmap, alloc_mem) MiB for rank 0."""
    where = f"rank-{rank}.csv phases"
    scale = rank + 1
    malloc_mib = sizes_mib[0]
    plateaus = plateaus_for(ev)
    missing = [e for p in PLATEAUS[:5] for e in p[1:3] if e not in ev]
    missing += [e for p in plateaus for e in p[1:3] if e not in ev]
    if missing:
        ck.fail(where, f"phase log lacks events {sorted(set(missing))}")
        return None
    got = None
    if sampler_series:
        got = origin_from_sampler(samples, sampler_series, t_line)
    if got is None:
        got = estimate_origin(samples, ev, scale * malloc_mib * MIB // 2)
    if got is None:
        ck.fail(where, f"total rss never rose by {scale * malloc_mib // 2} MiB over the first "
                f"sample: the malloc phase ({scale * malloc_mib} MiB) is not in the timeline")
        return None
    origin, unc = got
    margin = max(margin, unc + 0.05)
    results = {}
    base = None
    for name, first, last, app_units, mpi_units in plateaus:
        lo, hi = ev[first] + margin, ev[last] - margin
        inwin = [(t, c) for t, c, _ in samples if lo <= origin + t <= hi]
        if not inwin:
            ck.fail(where, f"no sample inside the {name} plateau "
                    f"({hi - lo + 2 * margin:.2f} s long, margin {margin:.2f} s)")
            return None
        app = [c.get("app", (0, 0))[0] for _, c in inwin]
        mpi = [c.get("mpi", (0, 0))[0] for _, c in inwin]
        tot = [c["total"][0] for _, c in inwin]
        # The kernel's own figure for the same plateau, from the sampler.
        if sampler_series:
            vm = [v for m, v, _ in sampler_series if lo <= m <= hi]
            if vm:
                ref = sorted(vm)[len(vm) // 2]
                worst = max(tot, key=lambda x: abs(x - ref))
                if abs(worst - ref) > 0.01 * ref:
                    ck.fail(where, f"{name}: total rss {mib(worst)} vs sampler VmRSS "
                            f"{mib(ref)} ({(worst - ref) / ref * 100:+.1f}%, limit 1%)")
        if base is None:
            base = (app[0], mpi[0], tot[0])
        exp_app = sum(u * m for u, m in zip(app_units, sizes_mib)) * scale * MIB
        exp_mpi = sum(u * m for u, m in zip(mpi_units, sizes_mib)) * scale * MIB
        for label, vals, b, expect in (("app", app, base[0], exp_app),
                                       ("mpi", mpi, base[1], exp_mpi),
                                       ("total", tot, base[2], exp_app + exp_mpi)):
            tol = MIB + 0.02 * expect
            worst = max(vals, key=lambda x: abs(x - b - expect))
            if abs(worst - b - expect) > tol:
                ck.fail(where, f"{name}: {label} rss grew by {mib(worst - b)} over the "
                        f"baseline, expected {mib(expect)} (tolerance {mib(tol)})")
        results[name] = (app[0] - base[0], mpi[0] - base[1], len(inwin))
    return origin, results


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--ranks", type=int, required=True)
    ap.add_argument("--sampler")
    ap.add_argument("--peak-tol", type=float, default=0.03)
    ap.add_argument("--phase-dir")
    ap.add_argument("--malloc-mib", type=int, default=16)
    ap.add_argument("--mmap-mib", type=int, default=8)
    ap.add_argument("--alloc-mem-mib", type=int, default=0)
    ap.add_argument("--margin", type=float, default=0.2,
                    help="seconds trimmed off each end of a plateau")
    ap.add_argument("--hold-mib", type=int)
    ap.add_argument("--t-line", type=float,
                    help="CLOCK_MONOTONIC time the tool printed its tracing line")
    a = ap.parse_args()

    ck = Checker()
    if not os.path.isdir(a.out_dir):
        print(f"FAIL: output directory {a.out_dir} does not exist")
        return 1
    st = os.lstat(a.out_dir)
    if st.st_mode & stat.S_IWOTH:
        ck.fail(a.out_dir, "output directory is world-writable")
    entries = sorted(os.listdir(a.out_dir))
    for e in entries:
        m = re.match(r"^rank-(\d+)\.csv$", e)
        if m and int(m.group(1)) >= a.ranks:
            ck.fail(e, f"rank file beyond the {a.ranks} ranks of the job")
    extra = [e for e in entries if not re.match(r"^(rank-\d+|pid-\d+|summary)\.csv$", e)]
    if extra:
        ck.note(a.out_dir, f"other files: {extra}")

    sampler, sampler_ranks = ({}, {})
    if a.sampler:
        sampler, sampler_ranks = read_sampler(a.sampler)
    rank_pid = {r: p for p, r in sampler_ranks.items()}

    summary = read_summary(ck, os.path.join(a.out_dir, "summary.csv"))
    lines = []
    for rank in range(a.ranks):
        name = f"rank-{rank}.csv"
        nfail = len(ck.failures)
        pid, samples = read_rank_file(ck, os.path.join(a.out_dir, name), rank)
        if not samples:
            lines.append(f"rank {rank}: FAIL no usable samples")
            continue
        bad = check_samples(ck, name, samples)
        if summary:
            check_summary_for_rank(ck, rank, pid, samples, summary)
        totals = [(t, c["total"][0]) for t, c, _ in samples if "total" in c]
        peak_t, peak = max(totals, key=lambda x: x[1]) if totals else (0, 0)
        span = f"{len(samples)} samples {samples[0][0]:.2f}-{samples[-1][0]:.2f} s"
        parts = [f"rank {rank} pid {pid}: {span}", f"peak total rss {mib(peak)} @{peak_t:.2f}s"]
        series = None
        if a.sampler:
            want = rank_pid.get(rank)
            if want is None:
                ck.fail(name, "the sampler never saw this rank")
            else:
                if pid != want:
                    ck.fail(name, f"pid {pid} but rank {rank} is pid {want}")
                series = sampler[want]
                smax = max(v for _, v, _ in series)
                hwm = max(h for _, _, h in series)
                diff = (peak - smax) / smax
                parts.append(f"sampler max VmRSS {mib(smax)} ({diff * 100:+.2f}%), VmHWM {mib(hwm)}")
                if abs(diff) > a.peak_tol:
                    ck.fail(name, f"peak total rss {peak} B ({mib(peak)}) vs sampler max VmRSS "
                            f"{smax} B ({mib(smax)}): {diff * 100:+.2f}%, limit "
                            f"±{a.peak_tol * 100:.0f}%")
        peaks = {}
        for _, comps, _ in samples:
            for c, (rss, _) in comps.items():
                peaks[c] = max(peaks.get(c, 0), rss)
        parts.append("peak app %s mpi %s" % (mib(peaks.get("app", 0)), mib(peaks.get("mpi", 0))))
        if a.phase_dir:
            path = os.path.join(a.phase_dir, f"phases-rank-{rank}.csv")
            try:
                ev, ppid = read_phase_log(path)
            except FileNotFoundError:
                ck.fail(name, f"no phase log {path}")
                ev, ppid = None, None
            if ev is not None:
                if pid != ppid:
                    ck.fail(name, f"pid {pid} but the workload's rank {rank} was pid {ppid}")
                res = check_phases(ck, rank, samples, ev, series,
                                   (a.malloc_mib, a.mmap_mib, a.alloc_mem_mib),
                                   a.margin, a.t_line)
                if res:
                    origin, results = res
                    grow = " ".join(f"{k}:{v[0] / MIB:+.1f}/{v[1] / MIB:+.1f}"
                                    for k, v in results.items())
                    parts.append(f"app/mpi growth MiB {grow}")
                    if a.t_line is not None:
                        parts.append(f"time_s 0 = tracing line {origin - a.t_line:+.2f}s")
        if a.hold_mib is not None:
            app_last = samples[-1][1].get("app", (0, 0))[0]
            if app_last < 0.97 * a.hold_mib * MIB:
                ck.fail(name, f"last sample's app rss {mib(app_last)} < the {a.hold_mib} MiB "
                        "the rank holds")
            parts.append(f"final app {mib(app_last)}")
        parts.append("sums OK" if bad == 0 else f"{bad} bad sums")
        status = "ok" if len(ck.failures) == nfail else "FAIL"
        lines.append(f"{status} " + ", ".join(parts))
    for line in lines:
        print(line)
    for n in ck.notes:
        print(f"note: {n}")
    for f in ck.failures:
        print(f"FAIL: {f}")
    if ck.failures:
        print(f"check_csv: {len(ck.failures)} failure(s) in {a.out_dir}")
        return 1
    print(f"check_csv: all checks passed for {a.ranks} rank(s) in {a.out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
