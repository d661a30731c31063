#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Turn the raw results of tools/bench/run.sh into BENCHMARKS.md.

    report.py RESULTS_DIR OUTPUT.md

Standard library only. Every figure in the report comes from RESULTS_DIR;
the prose around the figures says how they were measured and, where a
target is missed, by how much (computed here) and why (the mechanism,
written once, below).
"""
import csv
import json
import os
import statistics
import sys

MIB = 1024 * 1024

MODE_LABEL = {
    "untraced": "untraced",
    "default": "memattr-bpf (default)",
    "mpi-calls": "memattr-bpf --mpi-calls",
    "heap": "memattr-bpf --heap",
    "daemon": "memattr-bpf daemon (node service, its defaults)",
    "heaptrack": "heaptrack",
    "massif": "valgrind --tool=massif",
    "memleak": "memleak method (bpftrace)",
    "memnesia": "memnesia method (PMPI + smaps)",
}
MODE_ORDER = list(MODE_LABEL)
OPT_IN = {"mpi-calls": "mode_mpi_calls", "heap": "mode_heap"}

# metric -> (title, unit shown, higher is better)
METRICS = {
    "malloc_pair_ns": ("malloc microbenchmark: ns per malloc/free pair (mixed sizes)", "ns", False),
    "pingpong_us": ("8-byte ping-pong: half round trip, 2 ranks", "us", False),
    "msgrate": ("small-message rate: 8-byte messages/s, window 64, 1 pair (2 ranks)", "msg/s", True),
    "alltoall_ms": ("all-to-all with per-iteration malloc/free, 2 KiB / 4 MiB per peer alternating, 2 ranks: ms per iteration",
                    "ms", False),
    "miniapp_s": ("mini-app (allocation phases + Jacobi compute + halo exchange), 2 ranks: wall seconds", "s", False),
}
METRIC_ORDER = list(METRICS)
WORKLOAD_OF = {"malloc_pair_ns": "malloc", "pingpong_us": "p2p", "msgrate": "p2p",
               "alltoall_ms": "alltoall", "miniapp_s": "miniapp"}


def read_tsv(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return list(csv.DictReader(f, delimiter="\t"))


def read_meta(path):
    meta = {}
    if os.path.exists(path):
        for line in open(path):
            k, _, v = line.rstrip("\n").partition("=")
            meta[k] = v
    return meta


def fnum(v, unit=""):
    """Figures with 3-4 significant digits; M / k for large ones."""
    if v is None:
        return "-"
    a = abs(v)
    if a >= 1e6:
        s = f"{v / 1e6:.2f}M"
    elif a >= 1e4:
        s = f"{v / 1e3:.1f}k"
    elif a >= 100:
        s = f"{v:.0f}"
    elif a >= 10:
        s = f"{v:.1f}"
    elif a >= 1:
        s = f"{v:.2f}"
    else:
        s = f"{v:.3f}"
    return f"{s} {unit}" if unit else s


def mib(b):
    return f"{b / MIB:.1f} MiB"


def slowdown(metric, v, base):
    """How many times slower than untraced (>1 = slower)."""
    if not v or not base:
        return None
    return v / base if not METRICS[metric][2] else base / v


def fmt_slow(x):
    if x is None:
        return "-"
    pct = (x - 1) * 100
    if x >= 10:
        return f"{x:,.0f}x"
    return f"{x:.3f}x ({pct:+.1f}%)" if x < 2 else f"{x:.2f}x"


class Results:
    def __init__(self, d):
        self.d = d
        self.meta = read_meta(os.path.join(d, "meta.txt"))
        self.rows = read_tsv(os.path.join(d, "overhead.tsv"))
        self.toolruns = read_tsv(os.path.join(d, "toolruns.tsv"))
        self.commands = read_tsv(os.path.join(d, "commands.tsv"))
        self.footprint = read_tsv(os.path.join(d, "footprint.tsv"))
        self.storm = read_tsv(os.path.join(d, "storm.tsv"))
        self.neighbour = read_tsv(os.path.join(d, "neighbour.tsv"))
        self.costs = read_tsv(os.path.join(d, "costs.tsv"))
        self.bpfstats = read_tsv(os.path.join(d, "bpfstats.tsv"))
        self.attach = read_tsv(os.path.join(d, "attach.tsv"))
        self.attach64 = read_tsv(os.path.join(d, "attach64.tsv"))
        fp = os.path.join(d, "failures.txt")
        self.failures = [l.strip() for l in open(fp)] if os.path.exists(fp) else []
        self.failures = [f for f in self.failures if f]

    def values(self, metric, mode):
        return [float(r["value"]) for r in self.rows if r["metric"] == metric and r["mode"] == mode]

    def median(self, metric, mode):
        v = self.values(metric, mode)
        return statistics.median(v) if v else None

    def present(self, mode):
        key = OPT_IN.get(mode)
        return True if not key else self.meta.get(key) == "1"

    def ran(self, mode):
        return any(r["mode"] == mode for r in self.rows)


def overhead_tables(R, out):
    for metric in METRIC_ORDER:
        title, unit, higher = METRICS[metric]
        base = R.median(metric, "untraced")
        out.append(f"### {title}\n")
        bmin = (max if higher else min)(R.values(metric, "untraced")) if R.values(metric, "untraced") else None
        out.append(f"| mode | median | min - max | runs | slowdown vs untraced (ratio of medians) | ratio of best runs |")
        out.append("|---|---:|---:|---:|---:|---:|")
        for mode in MODE_ORDER:
            vals = R.values(metric, mode)
            label = MODE_LABEL[mode]
            if not R.present(mode):
                out.append(f"| {label} | mode not in this build | | | | |")
                continue
            if mode == "memnesia" and metric == "malloc_pair_ns":
                out.append(f"| {label} | n/a: not an MPI program, no MPI call to wrap | | | | |")
                continue
            if not vals:
                why = "failed (see below)" if any(f.startswith(f"{WORKLOAD_OF[metric]} {mode} ") for f in R.failures) else "not run"
                out.append(f"| {label} | {why} | | | | |")
                continue
            med = statistics.median(vals)
            sd = slowdown(metric, med, base) if mode != "untraced" else None
            best = (max if higher else min)(vals)
            bsd = slowdown(metric, best, bmin) if mode != "untraced" else None
            out.append(f"| {label} | {fnum(med, unit)} | {fnum(min(vals))} - {fnum(max(vals))} | {len(vals)} | "
                       f"{fmt_slow(sd) if mode != 'untraced' else '1 (reference)'} | "
                       f"{fmt_slow(bsd) if mode != 'untraced' else '1'} |")
        out.append("")


def summary_matrix(R, out):
    short = {"malloc_pair_ns": "malloc/free pair", "pingpong_us": "ping-pong latency", "msgrate": "message rate",
             "alltoall_ms": "all-to-all alloc/free", "miniapp_s": "mini-app wall time"}
    out.append("| mode | " + " | ".join(short[m] for m in METRIC_ORDER) + " |")
    out.append("|---|" + "---:|" * len(METRIC_ORDER))
    for mode in MODE_ORDER[1:]:
        cells = []
        for metric in METRIC_ORDER:
            higher = METRICS[metric][2]
            if not R.present(mode):
                cells.append("not in this build")
                continue
            if mode == "memnesia" and metric == "malloc_pair_ns":
                cells.append("n/a")
                continue
            vals, base = R.values(metric, mode), R.values(metric, "untraced")
            if not vals or not base:
                cells.append("-")
                continue
            med = slowdown(metric, statistics.median(vals), statistics.median(base))
            best = slowdown(metric, (max if higher else min)(vals), (max if higher else min)(base))
            cells.append(f"{short_x(med)} ({short_x(best)})")
        out.append(f"| {MODE_LABEL[mode]} | " + " | ".join(cells) + " |")
    out.append("")


def short_x(x):
    if x is None:
        return "-"
    if x >= 100:
        return f"{x:,.0f}x"
    if x >= 10:
        return f"{x:.0f}x"
    return f"{x:.2f}x"


def toolrun_table(R, out):
    if not R.toolruns:
        return
    out.append("| workload | mode | runs | attached (fds held) | events (median) | dropped (max) | tool CPU s per run (user+sys, median) | tool max RSS |")
    out.append("|---|---|---:|---|---:|---:|---:|---:|")
    groups = {}
    for r in R.toolruns:
        groups.setdefault((r["workload"], r["mode"]), []).append(r)
    for (w, m), rs in groups.items():
        def num(x):
            try:
                return float(x)
            except (TypeError, ValueError):
                return None
        ev = [num(r["events"]) for r in rs if num(r["events"]) is not None]
        dr = [num(r["dropped"]) for r in rs if num(r["dropped"]) is not None]
        cpu = [num(r["tool_user_s"]) + num(r["tool_sys_s"]) for r in rs
               if num(r["tool_user_s"]) is not None and num(r["tool_sys_s"]) is not None]
        rss = [num(r["tool_maxrss_kb"]) for r in rs if num(r["tool_maxrss_kb"]) is not None]
        att = rs[0].get("attachments") or "-"
        out.append(f"| {w} | {MODE_LABEL[m]} | {len(rs)} | {att} | {fnum(statistics.median(ev)) if ev else '-'} | "
                   f"{int(max(dr)) if dr else '-'} | {statistics.median(cpu):.2f} | "
                   f"{mib(max(rss) * 1024) if rss else '-'} |" if cpu else
                   f"| {w} | {MODE_LABEL[m]} | {len(rs)} | - | - | - | - | - |")
    out.append("")


def footprint_rows(R):
    rows = []
    for r in R.footprint:
        try:
            rss = int(r["vmrss_kb"]) * 1024
            hwm = int(r["vmhwm_kb"]) * 1024
            maps = int(r["map_memlock"])
            progs = int(r["prog_memlock"])
            # BPF maps mapped into the tool (the ring buffer twice) are in its RSS and in the maps' memlock.
            mapped = int(r.get("bpf_mapped_kb") or 0) * 1024
            rows.append(dict(ranks=int(r["ranks"]), startup=float(r["startup_s"]), cpu=float(r["cpu_pct"]),
                             window=float(r["window_s"]), rss=rss, hwm=hwm, maps=maps, progs=progs, mapped=mapped,
                             total=hwm - mapped + maps + progs, nprogs=r["nprogs"], events=r["events"],
                             dropped=r["dropped"], cpu_total=float(r["tool_user_s"]) + float(r["tool_sys_s"]),
                             elapsed=float(r["tool_elapsed_s"])))
        except (KeyError, ValueError, TypeError):
            continue
    return rows


def target_table(R, out):
    """The issue's targets, each with the measured figure and a verdict."""
    verdicts = []

    def ratio(metric, mode):
        return slowdown(metric, R.median(metric, mode), R.median(metric, "untraced"))

    def add(target, measured, ok, note=""):
        verdicts.append((target, measured, ok, note))

    for metric, lim, name in (("pingpong_us", 1.05, "default mode: 8-byte ping-pong latency within 5% of untraced"),
                              ("miniapp_s", 1.02, "default mode: mini-app wall time within 2% of untraced"),
                              ("msgrate", 1.05, "default mode: message rate within 5% of untraced")):
        x = ratio(metric, "default")
        if x is None:
            add(name, "not measured", None)
        else:
            add(name, fmt_slow(x), x <= lim, f"{(x - lim) * 100:+.1f} points past the limit" if x > lim else "")
    # heap mode vs memleak
    name = "heap mode: cost per malloc/free pair below the bpftrace memleak method's"
    if not R.present("heap"):
        add(name, "mode not in this build", None)
    else:
        base = R.median("malloc_pair_ns", "untraced")
        h, m = R.median("malloc_pair_ns", "heap"), R.median("malloc_pair_ns", "memleak")
        if h is None or m is None or base is None:
            add(name, "not measured", None)
        else:
            add(name, f"heap {h - base:.0f} ns added per pair vs memleak {m - base:.0f} ns", h < m)
    fp = {r["ranks"]: r for r in footprint_rows(R)}
    top = max(fp) if fp else None
    name = "tool footprint at 64 ranks: under 64 MiB including BPF maps"
    if 64 in fp:
        r = fp[64]
        add(name, f"{mib(r['total'])} (peak RSS {mib(r['hwm'])} - BPF maps mapped in {mib(r['mapped'])} "
                  f"+ maps {mib(r['maps'])} + programs {mib(r['progs'])})",
            r["total"] < 64 * MIB, f"{mib(r['total'] - 64 * MIB)} over" if r["total"] >= 64 * MIB else "")
    else:
        add(name, f"not measured at 64 ranks (largest: {top})" if top else "not measured", None)
    name = "tool CPU at 64 ranks: under 5% of one core at the default interval (100 ms)"
    if 64 in fp:
        r = fp[64]
        add(name, f"{r['cpu']:.2f}% of one core (steady window of {r['window']:.0f} s)", r["cpu"] < 5.0,
            f"{r['cpu'] - 5:.2f} points over" if r["cpu"] >= 5 else "")
    else:
        add(name, "not measured at 64 ranks", None)
    out.append("| target | measured | met? |")
    out.append("|---|---|---|")
    for t, m, ok, note in verdicts:
        v = "yes" if ok else ("**no**" + (f": {note}" if note else "") if ok is False else "not measured")
        out.append(f"| {t} | {m} | {v} |")
    out.append("")
    return verdicts


def footprint_table(R, out):
    rows = footprint_rows(R)
    if not rows:
        out.append("(not run)\n")
        return
    out.append("| ranks | attach (s to 'tracing') | CPU, steady (% of one core) | CPU whole run (s) | RSS now | peak RSS (VmHWM) | of it, BPF maps mapped in | BPF maps (memlock) | BPF programs | peak RSS - mapped + maps + programs | events | dropped |")
    out.append("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in sorted(rows, key=lambda x: x["ranks"]):
        out.append(f"| {r['ranks']} | {r['startup']:.1f} | {r['cpu']:.2f} | {r['cpu_total']:.2f} in {r['elapsed']:.0f} s | "
                   f"{mib(r['rss'])} | {mib(r['hwm'])} | {mib(r['mapped'])} | {mib(r['maps'])} | {mib(r['progs'])} ({r['nprogs']}) | "
                   f"{mib(r['total'])} | {r['events']} | {r['dropped']} |")
    out.append("")
    js = os.path.join(R.d, f"footprint.{max(x['ranks'] for x in rows)}.json")
    if os.path.exists(js):
        j = json.load(open(js))
        out.append(f"BPF maps held by the tool at {max(x['ranks'] for x in rows)} ranks (from its fdinfo; "
                   "`bpftool map show` prints the same memlock figures):\n")
        out.append("| map id | type | max entries | memlock |")
        out.append("|---:|---:|---:|---:|")
        for m in sorted(j["maps"], key=lambda m: -m["memlock"]):
            out.append(f"| {m['id']} | {m['type']} | {m['max_entries']} | {mib(m['memlock'])} |")
        out.append("")


def storm_table(R, out):
    if not R.storm:
        out.append("(not run)\n")
        return None
    out.append("| storming processes | target pages/s each | tool stopped | untraced pages/s (all) | traced pages/s (all) | events seen | dropped | events/s absorbed | tool CPU (user+sys s) |")
    out.append("|---:|---:|---|---:|---:|---:|---:|---:|---:|")
    best = None
    for r in R.storm:
        tgt = "as fast as it can" if r["target_pages_per_s"] == "0" else fnum(float(r["target_pages_per_s"]))
        try:
            cpu = f"{float(r['tool_user_s']) + float(r['tool_sys_s']):.2f}"
        except ValueError:
            cpu = "-"
        def f(k):
            try:
                return fnum(float(r[k]))
            except ValueError:
                return "-"
        stall = "no" if r.get("stall_s", "0") in ("0", "") else f"{r['stall_s']} s (SIGSTOP)"
        out.append(f"| {r['procs']} | {tgt} | {stall} | {f('untraced_pages_per_s')} | {f('pages_per_s')} | {r['events']} | "
                   f"{r['dropped']} | {f('events_per_s')} | {cpu} |")
        try:
            if r.get("stall_s", "0") in ("0", "") and int(r["dropped"]) == 0 and \
                    (best is None or float(r["pages_per_s"]) > best[0]):
                best = (float(r["pages_per_s"]), float(r["events_per_s"]))
        except ValueError:
            pass
    out.append("")
    return best


def neighbour_table(R, out):
    """Page-fault rate of an untraced process alone and beside a running tool."""
    rows = [r for r in R.neighbour if r.get("alone_pages_per_s") and r.get("beside_pages_per_s")]
    if not rows:
        out.append("_Not measured in this run._\n")
        return
    alone = sorted(float(r["alone_pages_per_s"]) for r in rows)
    beside = sorted(float(r["beside_pages_per_s"]) for r in rows)
    ma, mb = alone[len(alone) // 2], beside[len(beside) // 2]
    out.append("| process | median pages/s | min - max | runs |")
    out.append("|---|---:|---:|---:|")
    out.append(f"| alone | {fnum(ma)} | {fnum(alone[0])} - {fnum(alone[-1])} | {len(alone)} |")
    out.append(f"| beside a running memattr-bpf (tracing another process) | {fnum(mb)} | "
               f"{fnum(beside[0])} - {fnum(beside[-1])} | {len(beside)} |")
    out.append("")
    if ma > 0 and mb > 0:
        out.append(f"Slowdown of the untraced process: **{ma / mb:.2f}x**, about "
                   f"**{(1e6 / mb - 1e6 / ma):.2f} us more per page fault** (within the runs' spread when near "
                   "zero). An untraced process pays one load and test of its bits in the one BPF program its faults run "
                   "(`tp_btf/rss_stat`; `tp_btf/page_fault_user` too where the faults' frame is not found, see "
                   "docs/attribution.md): see \"Cost per event\" for the BPF time per program and the same with 8 threads "
                   "of one process.\n")


def accuracy_table(R, out):
    out.append("| workload | rank | tool peak total RSS | kernel VmHWM | tool / VmHWM | peak VmRSS sampled (20 ms) | tool / sampled | tool peak PSS | peak Pss sampled (smaps_rollup) | tool / sampled Pss |")
    out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    any_row = False
    for w, label in (("miniapp", "mini-app"), ("alltoall", "all-to-all 2 KiB/4 MiB"), ("hold8", "hold, 8 ranks")):
        sj = os.path.join(R.d, f"accuracy.{w}.summary.csv")
        kj = os.path.join(R.d, f"accuracy.{w}.kernel.json")
        if not (os.path.exists(sj) and os.path.exists(kj)):
            continue
        kern = json.load(open(kj))
        tool = {r["rank"]: r for r in csv.DictReader(open(sj)) if r["component"] == "total"}
        for rank in sorted(kern, key=int):
            k = kern[rank]
            t = tool.get(rank)
            if not t:
                out.append(f"| {label} | {rank} | missing | {mib(k['vmhwm_kb'] * 1024)} | | | | | | |")
                continue
            pr, pp = int(t["peak_rss_bytes"]), int(t["peak_pss_bytes"])
            hwm, rss, pss = k["vmhwm_kb"] * 1024, k["vmrss_kb"] * 1024, k["pss_kb"] * 1024
            out.append(f"| {label} | {rank} | {mib(pr)} | {mib(hwm)} | {pr / hwm:.3f} | {mib(rss)} | {pr / rss:.3f} | "
                       f"{mib(pp)} | {mib(pss)} | {pp / pss:.3f} |")
            any_row = True
    if not any_row:
        out.append("| (not run) | | | | | | | | | |")
    out.append("")


def commands(R, out):
    scr = R.meta.get("scratch", "")
    out.append("As run (for each workload, the first repetition of each mode). The job runs as `memattr-bench`: "
               "`runuser -u memattr-bench -- env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=... env -C $RUN <job>`; "
               "the tracer after `||` runs as root (memattr-bpf under `/usr/bin/time -f '%e %U %S %M'`). "
               "`$S` is the scratch dir (`/tmp/memattr-bench.XXXXXX`, workloads built into `$S/bin` by "
               "`make -C tools/bench/workloads OUT=$S/bin`), `$RUN` the run's own dir, `<pid>` the pids the "
               "harness read from `$RUN/ready/`.\n")
    out.append("```")
    seen = set()

    def clean(c):
        import re
        if scr:
            c = c.replace(scr, "$S")
        c = re.sub(r"\$S/runs/[^/ ]+", "$RUN", c)
        c = re.sub(r"--(job|pid) [0-9,]+", r"--\1 <pid>", c)
        return c
    for r in R.commands:
        key = (r["workload"], r["mode"])
        if key in seen:
            continue
        seen.add(key)
        out.append(f"# {r['workload']} / {MODE_LABEL.get(r['mode'], r['mode'])}" + ("" if r["status"] == "ok" else " (FAILED)"))
        out.append(clean(r["command"]))
    for name in sorted(os.listdir(R.d)):
        if name.endswith(".cmd"):
            out.append(f"# {name[:-4]}")
            out.append(clean(open(os.path.join(R.d, name)).read().strip()))
    out.append("```\n")


# Sections another generator writes into BENCHMARKS.md (tools/validate/run.sh
# and tools/validate/model_check.sh --update-doc, between their markers), carried over verbatim so a `make bench`
# keeps them. What other scripts print (mpi_compare.sh, daemon_bench.sh,
# scale.sh) and notes written by hand go in docs/benchmark-history.md.
KEPT_SECTIONS = ("## Validation on real applications", "## Memory model: predicted against measured")


COST_MODEL = """How it grows with the core count. An untraced process's fault runs one program, `ma_rss_stat`
(`ma_fault_user` too where the faults' frame was not found at start), that tests the process's two bits in one
word of a read-only bitmap (no helper call, no write, no lock), so its cost does not depend on the number of
CPUs or threads: 8 threads of one process add nothing shared to each other's path. For a traced process the
same program reads the fault's address from the fault's own frame (its `struct vm_fault`, a few loads from the
faulting thread's own stack, the mapping and the page table lock the fault holds). Where a traced fault's
time goes (storm, per call with the `bpf_stats_enabled` accounting, builds of 9322d01 cut short at each step,
3 runs each): a program that returns after the bit test, 41-43 ns (the tracepoint's dispatch and the
accounting); computing the change from the counter, +24 ns; the address from the frame, +6 ns; the run, +14 ns
(84-88 ns in all). A command a rank runs (`system()`) stops at the same test until the tool first reads its
smaps (it is "quiet": that read counts what it faulted before), which it does once the command has lived one
sample interval; until then its records wait in user space, and they are dropped unread when it ends (most
end within milliseconds). The kernel's own RSS
counter is a percpu_counter; the classic `kmem:rss_stat` tracepoint, which the tool used before, summed all of
its per-CPU slots under the counter's lock at every change of every process once enabled (2 slots here, 128 on
a 128-core node, with the lock serialising the faulting threads of one process). The raw `tp_btf/rss_stat` the
tool uses now is handed (mm, member) only; for a traced process the program reads the shared count and this
CPU's slot and keeps the last values it saw (the count per mm, the slot per CPU, in two arrays indexed by a
small id of the address space that each thread caches in its own context: no hash lookup on a fault), so the
deltas it sends add up exactly to the counter's change: two reads per change, and an exchange only when the
shared count moved, whatever the core count. Only anchoring a newly traced address space reads every CPU's
slot (a loop over the possible CPUs), once per process; the per-CPU array costs 16 bytes per followed process
per CPU (4096 processes: 64 KiB per CPU).

Records. A one-page fault next to one of the thread's runs in progress (up to 8 per thread, one word each in
its own context: nothing shared with other threads) only grows that run, with one compare-and-exchange; a run
goes into the ring buffer (whose reservation takes a lock shared by every CPU) when it ends, so a loop that
fills fresh arrays sends one record per array, not one per page. The tool collects the runs in progress at
every sample with an `iter/task` program, which walks every task on the node once per sample (about 0.1 ms for
a few hundred tasks): that cost grows with the number of tasks, not with the faults.

Syscalls. The memory syscalls (mmap, munmap, mremap, mprotect, brk, madvise, mlock*, shmat, shmdt) run a program on
their own `syscalls:sys_enter_<name>`/`sys_exit_<name>` tracepoints (one program, `ma_sys_enter`, on every entry, and
one, `ma_sys_exit`, on every exit). While any syscall tracepoint is in use,
every syscall of every thread on the node takes the kernel's syscall-tracing path (the per-task
SYSCALL_TRACEPOINT flag), and the kernel tests the syscall's bit in a per-tracepoint bitmap before it runs a
program: a syscall that is not a memory request runs no program at all, whatever the core count. A memory
request of a process the tool does not trace runs one program that tests one bit and returns.
"""

COST_ITEMS = [
    # item, unit, what, higher is better
    ("storm1", "pages/s", "page-fault storm, 1 thread", True),
    ("storm8", "pages/s", "page-fault storm, 8 threads of one process", True),
    ("storm1cpu", "ns", "page-fault storm, 1 thread: its own CPU time per page", False),
    ("storm8cpu", "ns", "page-fault storm, 8 threads: the process's CPU time per page", False),
    ("syscall", "ns", "a syscall that is not a memory request (getppid)", False),
    ("memreq", "us", "memory requests (heap grown by brk and trimmed every iteration)", False),
    ("forkexec", "ms", "fork/exec-heavy job (4 ranks, system() in a loop), per command", False),
]
VARIANT_NAMES = {
    "untraced": "untraced, no tool",
    "beside": "untraced, beside a tool tracing another process",
    "traced": "traced (default mode)",
    "traced:--heap": "traced, --heap",
    "traced:--mpi-calls": "traced, --mpi-calls",
    "daemon": "traced by the node service (its defaults)",
}


def cost_medians(R):
    med = {}
    for item, _, _, _ in COST_ITEMS:
        for var in VARIANT_NAMES:
            v = [float(r["value"]) for r in R.costs if r["item"] == item and r["variant"] == var]
            if v:
                med[(item, var)] = (statistics.median(v), min(v), max(v), len(v))
    return med


def cost_ratio(med, item, var, higher_is_better):
    a, b = med.get((item, "untraced")), med.get((item, var))
    if not a or not b or not a[0] or not b[0]:
        return None
    return a[0] / b[0] if higher_is_better else b[0] / a[0]


def costs_tables(R, out):
    """Issue 11: what each event costs, traced and untraced, with the per-program BPF time."""
    med = cost_medians(R)
    if not med:
        out.append("_Not measured in this run._\n")
        return {}
    out.append("| workload | run | median | min - max | runs | vs untraced |")
    out.append("|---|---|---:|---:|---:|---:|")
    for item, unit, what, hib in COST_ITEMS:
        for var, name in VARIANT_NAMES.items():
            m = med.get((item, var))
            if not m:
                continue
            x = cost_ratio(med, item, var, hib) if var != "untraced" else None
            out.append(f"| {what} | {name} | {fnum(m[0])} {unit} | {fnum(m[1])} - {fnum(m[2])} | {m[3]} | "
                       f"{'' if x is None else f'{x:.3f}x'} |")
    out.append("")
    out.append("Ratios are median against median in the same session (for rates, untraced / run; for times, "
               "run / untraced); the variants run back to back within each repetition, in an order rotated from one repetition to the next.\n")
    added = []
    for item, var in (("storm1", "beside"), ("storm8", "beside"), ("storm1", "traced")):
        a, b = med.get((item, "untraced")), med.get((item, var))
        if a and b and a[0] > 0 and b[0] > 0:
            added.append(f"{(1e9 / b[0] - 1e9 / a[0]):.0f} ns per page fault ({item}, {VARIANT_NAMES[var]})")
    for var in ("beside", "traced"):
        a, b = med.get(("syscall", "untraced")), med.get(("syscall", var))
        if a and b:
            added.append(f"{b[0] - a[0]:.0f} ns per syscall ({VARIANT_NAMES[var]})")
    a, b = med.get(("memreq", "untraced")), med.get(("memreq", "traced"))
    if a and b:
        added.append(f"{b[0] - a[0]:.1f} us per memory-request iteration (traced)")
    for item, var in (("storm1cpu", "beside"), ("storm8cpu", "beside"), ("storm1cpu", "traced")):
        a, b = med.get((item, "untraced")), med.get((item, var))
        if a and b:
            added.append(f"{b[0] - a[0]:.0f} ns of the process's own CPU time per page fault "
                         f"({item[:-3]}, {VARIANT_NAMES[var]})")
    if added:
        out.append("Added, from the medians: " + "; ".join(added) + ". Wall-clock page-fault figures are per "
                   "fault of the whole process (8 threads on 2 cores share them), so they include the "
                   "machine's noise (other tenants, the tool's own user space taking a core from the "
                   "process); the process's own CPU time (`CLOCK_PROCESS_CPUTIME_ID`, all its threads) is what "
                   "its faults cost on its own path, where the BPF programs run; the BPF time below is the "
                   "part the programs themselves take.\n")

    rows = [r for r in R.bpfstats if r.get("calls")]
    if rows:
        out.append("### BPF time per program (`kernel.bpf_stats_enabled`, runs of their own)\n")
        out.append("| scenario | program | calls | ns per call | calls per unit of work | ns per unit of work |")
        out.append("|---|---|---:|---:|---:|---:|")
        per_unit = {}
        for r in rows:
            calls, ns, units = float(r["calls"]), float(r["run_ns"]), float(r.get("units") or 0)
            if units:
                per_unit[r["scenario"]] = per_unit.get(r["scenario"], 0) + ns / units
            out.append(f"| {r['scenario']} | `{r['program']}` | {fnum(calls)} | {ns / calls:.0f} | "
                       f"{f'{calls / units:.2f}' if units else ''} | {f'{ns / units:.0f}' if units else ''} |")
        out.append("")
        names = {"neighbour1": "an untraced page fault (1 thread, beside a tool)",
                 "neighbour8": "an untraced page fault (8 threads of one process)",
                 "storm": "a traced page fault", "syscall": "a traced non-memory syscall",
                 "memreq": "a traced memory-request iteration (brk up with its stack, a fault, brk down)"}
        out.append("Sum per unit of work: " + "; ".join(f"{names.get(k, k)} {v:.0f} ns" for k, v in per_unit.items())
                   + ". Units: pages touched (storm), syscalls (sysloop), iterations (memreq). The accounting "
                   "itself (two clock reads per program run) is inside these figures: upper bounds.\n")
    att = [r for r in R.attach if r.get("attach_s")]
    if att:
        out.append("### Attach and detach with --heap --mpi-calls, 8 ranks of `hold`\n")
        out.append("| run | attach (start to tracing), s | detach (SIGINT to exit), s | "
                   "SIGINT 0.5 s after start: exit, s | ranks with rows after it |")
        out.append("|---:|---:|---:|---:|---:|")
        for r in att:
            out.append(f"| {r['rep']} | {r['attach_s']} | {r['detach_s']} | {r['early_sigint_exit_s']} | "
                       f"{r['ranks_with_rows']} of 8 |")
        out.append("")
    return med


# Why an issue-11 target can be missed, for "Missed targets" (keyed by the start of its name).
COST_WHY = {
    "all-to-all": "The workload does little but fault fresh pages: every page of its new buffers is an RSS "
                  "change, and each runs `ma_rss_stat` (and `ma_fault_kernel` first for the quarter the "
                  "kernel's copies fault in). \"Cost per event\" gives about 90 ns per traced fault with the "
                  "accounting, on faults of about 1.7 us. A build whose `ma_rss_stat` returned right after the "
                  "traced-bit test, so paying only the tracepoint's dispatch, measured 1.039x against the same "
                  "untraced runs (8 pairs, 2026-11-26): the dispatch of a program at every fault takes most of "
                  "the 5%, and the program's body (the counter's change, the fault's address, the run) about 3%.",
    "untraced process, storm, 1 thread": "What a process the tool does not trace pays per fault is the "
                  "kernel's dispatch of a program at the tracepoint, not the program: a build whose "
                  "`ma_rss_stat` returned at its first instruction cost the storm no less (its own CPU per "
                  "page, 5 interleaved runs, 2026-11-26: no tool 1,559 ns, the real tool 1,593, that build "
                  "1,605; a second check 1,586 vs 1,609 ns, 1.014x). On this VM (`spec_rstack_overflow: Safe "
                  "RET`) that dispatch is ~35 ns on a ~1.6 us fault, and the repetitions spread by more than "
                  "the target's 2%.",
    "fork/exec-heavy job": "4 ranks share the 2 cores, so each command's wall time holds the others' CPU: "
                  "per command the programs take ~65 us (`kernel.bpf_stats_enabled`, 2026-11-26: the ~35 memory "
                  "calls of each command's loader ~37 us, its ~195 page faults ~21 us, fork, exec and exit ~6 "
                  "us) and the tool's own user space ~50 us (97 ms for 800 commands launched, ~60 ms of it its start; its "
                  "fork, exec and exit records, the ranks' spawn stacks unwound, spread over many functions "
                  "in a 4 kHz profile). Launched under the "
                  "tool the same job measured 1.053x, attached 1.083x (8 interleaved triples, 2026-11-26).",
    "untraced process, storm, 8 threads: <= 1.02x (wall": "8 threads on 2 cores: the wall clock also holds "
                  "the tool's own user space taking a core now and then; the process's own CPU time per page, "
                  "the figure for what its faults pay, is in the row below it.",
}


def rep_ratios(untraced, run, higher_is_better):
    """Each repetition's own ratio ({rep: value} of each variant, which alternate
    within a repetition): their range is how far this host moves one pair."""
    return [untraced[k] / run[k] if higher_is_better else run[k] / untraced[k]
            for k in untraced if k in run and untraced[k] and run[k]]


def cost_rep_ratios(R, item, var, higher_is_better):
    def by_rep(v):
        return {r["rep"]: float(r["value"]) for r in R.costs if r["item"] == item and r["variant"] == v}
    return rep_ratios(by_rep("untraced"), by_rep(var), higher_is_better)


def overhead_rep_ratios(R, metric, mode):
    def by_rep(m):
        return {r["rep"]: float(r["value"]) for r in R.rows if r["metric"] == metric and r["mode"] == m}
    return rep_ratios(by_rep("untraced"), by_rep(mode), METRICS[metric][2])


def cost_targets(R, med, out):
    """Issue 11's targets, as measured in this run. Returns the missed ones as (name, measured)."""
    rows, missed = [], []

    def ratio_row(name, x, limit, reps=()):
        if x is None:
            rows.append(f"| {name} | not measured | |")
            return
        spread = f" (repetitions {min(reps):.3f}-{max(reps):.3f})" if reps else ""
        rows.append(f"| {name} | {x:.3f}x{spread} | {'yes' if x <= limit else '**no**'} |")
        if x > limit:
            missed.append((name, f"{x:.3f}x{spread}"))

    def cost_row(name, item, var, hib, limit):
        ratio_row(name, cost_ratio(med, item, var, hib), limit, cost_rep_ratios(R, item, var, hib))
    cost_row("untraced process, storm, 1 thread: <= 1.02x (wall clock)", "storm1", "beside", True, 1.02)
    cost_row("untraced process, storm, 1 thread: <= 1.02x (its own CPU time per page)",
             "storm1cpu", "beside", False, 1.02)
    cost_row("untraced process, storm, 8 threads: <= 1.02x (wall clock)", "storm8", "beside", True, 1.02)
    cost_row("untraced process, storm, 8 threads: <= 1.02x (its own CPU time per page)",
             "storm8cpu", "beside", False, 1.02)
    cost_row("traced storm: <= 1.15x (wall clock)", "storm1", "traced", True, 1.15)
    cost_row("traced storm: <= 1.15x (its own CPU time per page)", "storm1cpu", "traced", False, 1.15)
    for metric, name, limit in (("miniapp_s", "mini-app, default mode: <= 1.02x (wall time)", 1.02),
                                ("alltoall_ms", "all-to-all with per-iteration allocation, default mode: <= 1.05x",
                                 1.05)):
        vals, base = R.values(metric, "default"), R.values(metric, "untraced")
        ratio_row(name, slowdown(metric, statistics.median(vals), statistics.median(base))
                  if vals and base else None, limit, overhead_rep_ratios(R, metric, "default"))
    cost_row("fork/exec-heavy job, default mode: <= 1.05x", "forkexec", "traced", False, 1.05)
    cost_row("fork/exec-heavy job, --heap: <= 2x", "forkexec", "traced:--heap", False, 2.0)
    a, b = med.get(("syscall", "untraced")), med.get(("syscall", "traced"))
    if a and b:
        d = b[0] - a[0]
        rows.append(f"| a non-memory syscall, traced: <= 100 ns added | {d:.0f} ns | "
                    f"{'yes' if d <= 100 else '**no**'} |")
    # The memory syscalls' entry and exit programs, per request.
    req = [r for r in R.bpfstats if r.get("scenario") == "memreq" and float(r.get("units") or 0)
           and r.get("program", "") in ("ma_sys_enter", "ma_sys_exit")]
    if req:
        us = sum(float(r["run_ns"]) for r in req) / float(req[0]["units"]) / 1e3
        rows.append(f"| a memory request: <= 2 us of BPF time | {us:.2f} us (syscall entry and exit "
                    f"programs per iteration) | {'yes' if us <= 2 else '**no**'} |")
    att = [r for r in R.attach if r.get("attach_s")]
    if att:
        worst = max(max(float(r["attach_s"]), float(r["detach_s"])) for r in att)
        early = max(float(r["early_sigint_exit_s"]) for r in att)
        full = all(r["ranks_with_rows"] == "8" for r in att)
        rows.append(f"| --heap --mpi-calls attach and detach on 8 ranks: < 1 s | worst {worst:.2f} s | "
                    f"{'yes' if worst < 1 else '**no**'} |")
        rows.append(f"| SIGINT 0.5 s after start: honoured within 1 s, files complete | worst {early:.2f} s; "
                    f"{'every' if full else 'not every'} rank file has rows | "
                    f"{'yes' if early <= 1 and full else '**no**'} |")
    for r in R.attach64:
        rows.append(f"| 64 ranks of `hold`, --heap --mpi-calls: no drops | {r['dropped']} dropped; attached in "
                    f"{r['attach_s']} s, first sample at {r['first_sample_s']} s | "
                    f"{'yes' if r['dropped'] == '0' else '**no**'} |")
    out.append("| target (issue 11) | measured | met? |")
    out.append("|---|---|---|")
    out += rows
    out.append("")
    out.append("Measured: median against median; in brackets, the range of the repetitions' own ratios (each "
               "repetition runs the variants back to back, in a rotated order), which is how far this host "
               "moves one pair.\n")
    return missed


def kept_sections(path):
    if not os.path.exists(path):
        return []
    kept, cur, fence = [], None, False
    for line in open(path).read().split("\n"):
        if line.startswith("```"):
            fence = not fence
        if line.startswith("## ") and not fence:
            cur = [] if line.strip() in KEPT_SECTIONS else None
            if cur is not None:
                kept.append(cur)
        if cur is not None:
            cur.append(line)
    return ["\n".join(k).rstrip() + "\n" for k in kept]


def main():
    rdir, outp = sys.argv[1], sys.argv[2]
    R = Results(rdir)
    M = R.meta
    out = []
    dur = float(M.get("duration_s", "0") or 0)
    quick = M.get("quick") == "1"
    out.append("# Benchmarks\n")
    out.append("Generated by `make bench` (`tools/bench/run.sh`; raw figures in `tools/bench/results/`), and the "
               "blocks of \"Validation on real applications\" by `tools/validate/run.sh --update-doc` and those of "
               "\"Memory model\" by `tools/validate/model_check.sh --update-doc`. Do not edit "
               "by hand: rerun them. Measurements made by other scripts or by hand, and earlier runs: "
               "docs/benchmark-history.md.\n")
    if quick:
        out.append("**This is a BENCH_QUICK=1 smoke run: one or two repetitions, short time boxes. "
                   "Not the figures to quote.**\n")
    out.append(f"- When: {M.get('date', '?')}; the whole run took **{dur / 60:.1f} minutes** ({dur:.0f} s).")
    out.append(f"- Machine: {M.get('cpus', '?')} cores ({M.get('cpu_model', '?')}), {M.get('mem', '?')}, "
               f"Linux {M.get('kernel', '?')}; Open MPI {M.get('openmpi', '?')}, glibc {M.get('glibc', '?')}; "
               f"{M.get('heaptrack', '?')}, {M.get('valgrind', '?')}, {M.get('bpftrace', '?')}.")
    out.append(f"- memattr-bpf at commit {M.get('tool_commit', '?')}, binary built {M.get('tool_built', '?')} "
               f"(sha256 {M.get('tool_sha256', '?')}...; the run uses a copy made at its start); opt-in modes in this build: "
               f"--mpi-calls {'yes' if M.get('mode_mpi_calls') == '1' else 'no'}, "
               f"--heap {'yes' if M.get('mode_heap') == '1' else 'no'}.")
    out.append(f"- Repetitions: {M.get('reps_core')} for untraced and memattr-bpf modes, {M.get('reps_peer')} for "
               f"heaptrack / memleak / memnesia, {M.get('reps_massif')} for massif; time box {M.get('box_s')} s per "
               f"measurement; mini-app {M.get('miniapp_steps')} steps.")
    out.append(f"- Reproduce: `sudo make bench` (this run: {dur / 60:.0f} minutes); "
               "`sudo BENCH_QUICK=1 make bench` for a 3-minute smoke run that leaves its report in its scratch dir.\n")

    out.append("## Targets (issue 5)\n")
    verdicts = target_table(R, out)

    out.append("## Summary: slowdown against untraced\n")
    out.append("Ratio of medians per workload (for the message rate, untraced rate / traced rate), the best-run "
               "ratio in brackets; tables below give every figure.\n")
    summary_matrix(R, out)
    out.append("## How it is measured\n")
    out.append("""- Every MPI job runs as the unprivileged user `memattr-bench` (created if missing), 2 ranks on the
  2-core machine, `mpirun --oversubscribe` (needed beyond 2 ranks); the tracers (memattr-bpf, bpftrace) run as root,
  as on a real node.
- Start protocol: each workload process sets itself up (MPI_Init, buffers), writes `ready.<rank>` with its pid and
  waits for a `go` file; the harness attaches the tracer to the running job (`memattr-bpf --job <mpirun pid>`,
  which takes the launcher's running descendants; `--pid <pid>` for the single-process workloads;
  `bpftrace -p <rank pid>` per rank), waits until it says it is tracing, then creates `go`. Untraced runs go through the same steps. Launch-time tools (heaptrack, valgrind, the memnesia
  PMPI library via `LD_PRELOAD`) wrap each rank from the start. So the timed part never includes attach time.
- Figures are measured inside the workloads (CLOCK_MONOTONIC). malloc, ping-pong, message rate and all-to-all
  are time-boxed: batches double (never planning past the box) after a warm-up of a tenth of the box; the batch
  size is broadcast by rank 0 outside the timed part. The mini-app runs fixed work; its figure is the wall
  time from `go` to the final barrier.
- Interleaving: for each workload, repetition r runs every mode once, in an order rotated by r; untraced and
  traced runs therefore alternate throughout the session. Tables give the median, min - max and the number of
  runs; the slowdown is median(mode) / median(untraced) (for the message rate, untraced / mode). The machine is
  shared and 2 ranks polling fill both cores, so single runs can be several times slower than their peers; the
  last column compares the best run of each mode, the figure least touched by that noise.
- The memleak method: `tools/bench/peers/memleak.bt` (uprobe + uretprobe on glibc's malloc, uprobe on free, a
  hash map of live allocations keyed by address), one `bpftrace -p PID` per process.
- The memnesia method: `tools/bench/peers/memnesia_pmpi.c`, a PMPI wrapper library (LD_PRELOAD) that sums the
  Pss lines of `/proc/self/smaps` before and after every wrapped MPI call (point-to-point, waits,
  collectives, Init/Finalize) and charges the difference to MPI.
- Everything the harness starts is recorded by pid and start time and only that is ever signalled; tracers
  exit by themselves when the job ends (or get SIGINT: flush and detach), and the harness checks nothing of
  its own is left running.
""")

    out.append("## Overhead on the workloads\n")
    overhead_tables(R, out)
    out.append("### memattr-bpf's own work during those runs\n")
    out.append("Events the tool received, ring-buffer drops (from its end-of-run summary on stdout), and its CPU time "
               "and peak RSS over the whole run (from `/usr/bin/time`; includes attach and the initial smaps reads).\n")
    toolrun_table(R, out)

    out.append("## The tool's own cost: 1, 8 and 64 ranks of a mostly idle job\n")
    out.append(f"Workload `hold`: each rank mallocs and touches {M.get('hold_mib', '16')} MiB, then wakes every "
               "100 ms and every second allocates, touches and frees 256 KiB. memattr-bpf attaches with "
               f"`--job <mpirun pid>` at the default interval (100 ms) and PSS period. After {M.get('foot_settle_s')} s "
               f"of settling, its CPU time (utime+stime from /proc/PID/stat) is measured over a {M.get('foot_window_s')} s "
               "window; its memory is VmRSS / VmHWM plus the kernel-charged memory (`memlock` in fdinfo) of every BPF "
               "map and program it holds. The BPF ring buffer's pages are mapped into the tool, so they may be "
               "counted both in its RSS (once touched) and in the maps' memlock: the sum is an upper bound.\n")
    footprint_table(R, out)

    out.append("## Events per second absorbed before drops\n")
    out.append("Workload `storm`: one process touches the pages of a 64 MiB mapping one by one (every page is one "
               "page fault and one RSS-counter change; the tool receives the faults on consecutive pages as one "
               "record, a run) and gives them back with "
               f"MADV_DONTNEED after each pass, paced at a target rate, for {M.get('storm_seconds')} s per step, "
               "traced with `memattr-bpf --pid <pid,...>` and the default 16 MiB ring buffer; the last steps run "
               "2 and 4 such processes at once, unpaced (more producers than cores: the tool competes with them "
               "for CPU). An untraced run of each step gives the reference page rate. The last step stops the "
               "tool (SIGSTOP) for 1 s in the middle of the storm, a consumer that falls behind, to show that drops "
               "happen there and are counted: drops are counted by the BPF side and printed by the tool "
               "(`dropped: N`).\n")
    best = storm_table(R, out)
    if best is not None:
        nodrop = all(r["dropped"] == "0" for r in R.storm if r.get("stall_s", "0") in ("0", ""))
        out.append(f"Highest page-fault rate followed with no drop: **{fnum(best[0])} pages/s** (the storming "
                   f"processes' own rate; {fnum(best[1])} records/s reached the tool).\n")
        stalled_drops = sum(int(r["dropped"]) for r in R.storm
                            if r.get("stall_s", "0") not in ("0", "") and r["dropped"].isdigit())
        if nodrop:
            out.append("No step without the stop dropped anything: the per-event BPF work slows the faulting processes (compare the untraced "
                       "and traced page rates) before the consumer falls behind, so on this machine the ceiling is the "
                       "producers' own cost, not the tool's consumption. " +
                       ("The stopped step shows a consumer that does fall behind: the ring buffer fills, the excess is "
                        "dropped, and the drops are counted and reported.\n" if stalled_drops else
                        "Even the stopped step dropped nothing: a second of these storms, sent as runs, fits in the "
                        "ring buffer.\n"))

    out.append("## Cost to processes the tool does not trace\n")
    out.append("A site leaves the tool on next to other people's jobs, so what it costs a process it does not "
               "trace matters too. Workload `storm` (one process, unpaced page touching: every page is a fault "
               "and an RSS change) runs alone, then beside a memattr-bpf that traces an unrelated idle process, "
               "alternating.\n")
    neighbour_table(R, out)

    out.append("## Cost per event (issue 11)\n")
    out.append("Each workload runs untraced, beside a memattr-bpf that traces an idle process of its own (the "
               "cost to other people's jobs on the node), and traced (`--pid`, or `--job` for the MPI job), "
               f"alternating, {M.get('cost_reps', '?')} times (`tools/bench/costs.sh`).\n")
    cmed = costs_tables(R, out)
    cost_missed = []
    if cmed:
        cost_missed = cost_targets(R, cmed, out)
        out.append(COST_MODEL)

    out.append("## Accuracy: the tool's per-rank peak against the kernel's\n")
    out.append("memattr-bpf (default mode) traces the job; a sampler reads each rank's /proc/PID/status (VmRSS, VmHWM) "
               "and /proc/PID/smaps_rollup (Pss) every 20 ms (`tools/bench/procmon.py ranks`). The tool's figures are "
               "`total` rows of summary.csv (peak over its 100 ms samples). VmHWM is the kernel's exact high-water mark "
               "over the whole life of the process, including MPI_Init before the tool attached; the 20 ms sampler "
               "sees short peaks the 100 ms tool samples can miss.\n")
    accuracy_table(R, out)

    out.append("## Missed targets: by how much and why\n")
    missed = [v for v in verdicts if v[2] is False]
    unmeasured = [v for v in verdicts if v[2] is None]
    if not missed and not cost_missed:
        out.append("No measured target was missed.\n")
    for t, m, _, note in missed:
        out.append(f"- **{t}**: measured {m}{' (' + note + ')' if note else ''}. {why(R, key_of(t))}\n")
    for t, m in cost_missed:
        why_cost = next((w for k, w in COST_WHY.items() if t.startswith(k)), "")
        out.append(f"- **{t}** (issue 11): measured {m}. {why_cost}\n")
    for t, m, _, _ in unmeasured:
        out.append(f"- {t}: {m}. {WHY_ABSENT.get(key_of(t), '')}\n")
    out.append(mechanisms(R))
    if R.failures:
        out.append("## Runs that failed\n")
        for f in R.failures:
            out.append(f"- {f}")
        out.append("")
        if any("SIGTRAP" in f for f in R.failures):
            out.append("A valgrind run that dies with SIGTRAP in PMPI_Init: another tracer with uprobes on libmpi "
                       "(another `memattr-bpf --mpi-calls` or `--heap`: this machine is shared, and other sessions' "
                       "tests run them) was attached on the node. The kernel plants the uprobe's int3 in the "
                       "library's code of processes that map it; a native process traps once and goes on, but "
                       "valgrind translates the int3 as an instruction and delivers SIGTRAP. Reproduced by hand: "
                       "with `memattr-bpf --mpi-calls --job <pid>` attached to one job, a second, untraced, "
                       "`mpirun -np 2 valgrind --tool=massif p2p` died the same way (its native ping-pong was not "
                       "slowed). The harness retries such a run once.\n")
    out.append("## Exact commands\n")
    commands(R, out)
    out += kept_sections(outp)
    with open(outp, "w") as f:
        f.write("\n".join(out).rstrip() + "\n")
    print(f"report.py: wrote {outp}")


def key_of(target):
    for k in ("ping-pong", "mini-app", "message rate", "heap mode", "footprint", "CPU"):
        if k in target:
            return k
    return target


def tool_cpu(R, workload, mode="default"):
    """Median tool CPU seconds (user+sys) and median events per run."""
    cpu, ev = [], []
    for r in R.toolruns:
        if r["workload"] == workload and r["mode"] == mode:
            try:
                cpu.append(float(r["tool_user_s"]) + float(r["tool_sys_s"]))
                ev.append(float(r["events"]))
            except ValueError:
                pass
    return (statistics.median(cpu) if cpu else None, statistics.median(ev) if ev else None)


def spread(R, metric, mode="untraced"):
    v = R.values(metric, mode)
    return (max(v) / min(v) - 1) * 100 if v and min(v) > 0 else None


def per_fault_us(R):
    """Added cost per touched page (us), from the single unpaced storm step."""
    for r in R.storm:
        if r["procs"] == "1" and r["target_pages_per_s"] == "0" and r.get("stall_s", "0") in ("0", ""):
            try:
                u, t = float(r["untraced_pages_per_s"]), float(r["pages_per_s"])
                return (1 / t - 1 / u) * 1e6, 1e6 / u, 1e6 / t
            except (ValueError, ZeroDivisionError):
                return None
    return None


def why(R, key):
    """The mechanism behind a missed target, with this run's own figures."""
    if key in ("ping-pong", "message rate"):
        metric = "pingpong_us" if key == "ping-pong" else "msgrate"
        sp = spread(R, metric)
        cpu, ev = tool_cpu(R, "p2p")
        txt = []
        if sp is not None:
            txt.append(f"Untraced runs alone spread {sp:.0f}% from best to worst on this shared 2-core machine, "
                       "more than the 5% to be resolved; the best-run ratio in the table is the steadier figure.")
        # --heap runs every program of the default mode and more: if it is close to untraced in the
        # same session, the default mode's median was a draw of the machine, not the tool's work.
        heap, base, dflt = R.median(metric, "heap"), R.median(metric, "untraced"), R.median(metric, "default")
        if heap and base and dflt:
            rh, rd = slowdown(metric, heap, base), slowdown(metric, dflt, base)
            if rh is not None and rd is not None and rh < 1.1 < rd:
                txt.append(f"In the same session `--heap`, which runs every kernel program of the default mode "
                           f"and probes on top, measured {rh:.3f}x: the figure is bimodal on this machine "
                           "(untraced runs too fall in a fast and a slow state, by where the two polling ranks "
                           "are scheduled), and the default mode's runs fell in the slow one more often.")
        txt.append("In default mode nothing is probed on the MPI path: the 8-byte loop polls shared memory "
                   "(Open MPI's vader), makes no syscall and faults no page, so the BPF programs do not run "
                   f"in the loop (the tool received about {fnum(ev) if ev else '?'} events over the whole run, outside "
                   "the timed loops).")
        if cpu is not None:
            txt.append(f"What the ranks can pay is the tool's own CPU: {cpu:.2f} s per run (attach, the initial "
                       "smaps reads, a sample every 100 ms and an smaps read of each rank at least every second, "
                       "~0.7 ms each). Two ranks polling fill both cores, so every wake-up of the tool takes a core "
                       "from a rank and stalls the pair for its duration, and a latency or rate loop feels each "
                       "stall in full; the part of the measured difference beyond that share of the run is within "
                       "the untraced runs' own spread.")
        txt.append("On a node with a core the ranks do not use (the usual HPC layout leaves one for the system), "
                   "or with the tool pinned there, this term goes away; on this machine it cannot.")
        return " ".join(txt)
    if key == "mini-app":
        cpu, ev = tool_cpu(R, "miniapp")
        pf = per_fault_us(R)
        med = R.median("miniapp_s", "untraced")
        txt = [f"The mini-app's allocation phases fault in fresh pages: {fnum(ev) if ev else '?'} RSS-change records "
               "per run reach the tool (every 4 KiB page first touched is one page fault and one RSS-counter "
               "change; faults on consecutive pages reach it as one run)."]
        if pf:
            txt.append(f"Each costs the faulting rank about {pf[0]:.1f} us more in the kernel (storm: {pf[1]:.2f} us "
                       f"per page untraced, {pf[2]:.2f} us traced): the rss_stat program (which reads the fault's address from its frame), "
                       "and a ring-buffer record per run (submitted without waking the reader, which drains them "
                       "at each sample); \"Cost per event\" gives the BPF time of each program. Each page of a run "
                       "added one page, so the runs keep every page's owner exact.")
        if cpu is not None and med:
            txt.append(f"The tool's user-space side used {cpu:.2f} s of CPU per run, against "
                       f"{2 * med:.2f} core-seconds of ranks on a machine with no spare core.")
        return " ".join(txt)
    if key == "footprint":
        return ("The BPF maps are sized for a whole node, not for the job: the 16 MiB ring buffer, the per-mm "
                "anchor maps and the traced-process table, and the 512 KiB traced-tgid bitmap, whatever the job size "
                "(the ring buffer is also mapped into the tool, twice: its RSS shows it, and the total counts it "
                "once, in the maps); "
                "user-space memory grows with the number of processes (region tables, CSV buffers).")
    if key == "CPU":
        return ("At the default interval the tool samples every process every 100 ms (statm read, CSV row per "
                "component) and reads each process's smaps every second or less often: stretched to keep smaps "
                "reading under 2% of a core, and up to 4 times for a process whose last reads corrected nothing; "
                "the sampling itself grows linearly with the number of processes.")
    return ""


def mechanisms(R):
    """Context for the modes whose cost is by design (not targets)."""
    lines = []
    if R.present("mpi-calls") and R.median("pingpong_us", "mpi-calls"):
        x = slowdown("pingpong_us", R.median("pingpong_us", "mpi-calls"), R.median("pingpong_us", "untraced"))
        lines.append(f"- `--mpi-calls` puts a uprobe and a uretprobe on every MPI entry point the spec names: "
                     f"ping-pong {short_x(x)} slower, as DESIGN.md's platform facts predict (~1.4-1.8 us per "
                     "probed call pair here). It is an opt-in mode for that reason; it has no target.")
    if R.present("heap") and R.median("malloc_pair_ns", "heap"):
        h = R.median("malloc_pair_ns", "heap")
        m = R.median("malloc_pair_ns", "memleak")
        b = R.median("malloc_pair_ns", "untraced")
        lines.append(f"- `--heap` adds {h - b:,.0f} ns per malloc/free pair"
                     + (f", against {m - b:,.0f} ns for the memleak method (uprobe+uretprobe on malloc, uprobe on "
                        "free's entry, whose first instruction the kernel must single-step: ~23 us a hit here)"
                        if m else "") + ".")
    if not lines:
        return ""
    return "Costs that are by design (opt-in modes, no target but the heap one):\n\n" + "\n".join(lines) + "\n"


# Unmeasured targets: why.
WHY_ABSENT = {
    "heap mode": "The `--heap` mode is not in this build (its `--help` does not list the flag): the row reads "
                 "'mode not in this build'. The harness detects the flag and runs the mode and this comparison as "
                 "soon as it is there.",
    "footprint": "The 64-rank step runs in the full run only (BENCH_QUICK=1 stops at 16 ranks).",
    "CPU": "The 64-rank step runs in the full run only (BENCH_QUICK=1 stops at 16 ranks).",
}


if __name__ == "__main__":
    main()
