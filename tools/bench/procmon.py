#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""/proc measurements for the benchmarks (standard library only).

    procmon.py tool PID --settle S --window W --out FILE.json
        The tracer's own cost: CPU time (utime+stime from /proc/PID/stat)
        over a window of W seconds that starts S seconds from now, its VmRSS
        and VmHWM at the end of the window, the part of its RSS that is BPF
        maps mapped into it (the ring buffer, mapped twice, and .bss: memory
        the maps' memlock already counts), and the kernel-charged memory
        (fdinfo "memlock") of every BPF map and program it holds.

    procmon.py ranks --out FILE.json [--interval-ms 50] PID:RANK ...
        The kernel's view of each rank until they are gone (or SIGTERM):
        peak VmRSS, VmHWM (from /proc/PID/status) and peak Pss (from
        /proc/PID/smaps_rollup, ~0.1 ms a read), per rank.
"""
import argparse
import json
import os
import signal
import sys
import time

TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        s = f.read()
    fields = s[s.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime


def status(pid):
    out = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in ("VmRSS", "VmHWM"):
                    out[k] = int(v.split()[0])
    except OSError:
        return None
    return out if len(out) == 2 else None


def pss_kb(pid):
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def bpf_mapped_kb(pid):
    """Resident KiB of pid's mappings of BPF maps (smaps entries anon_inode:bpf-map)."""
    kb, in_map = 0, False
    try:
        with open(f"/proc/{pid}/smaps") as f:
            for line in f:
                first = line.split(None, 1)[0]
                if "-" in first and not first.endswith(":"):
                    in_map = line.rstrip().endswith("anon_inode:bpf-map")
                elif in_map and first == "Rss:":
                    kb += int(line.split()[1])
    except OSError:
        return None
    return kb


def bpf_objects(pid):
    """[(kind, id, type, memlock bytes, name)] of the BPF maps and programs pid holds."""
    objs = []
    fddir = f"/proc/{pid}/fd"
    for fd in os.listdir(fddir):
        try:
            target = os.readlink(f"{fddir}/{fd}")
        except OSError:
            continue
        if target not in ("anon_inode:bpf-map", "anon_inode:bpf-prog"):
            continue
        info = {}
        try:
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                for line in f:
                    k, _, v = line.partition(":")
                    info[k.strip()] = v.strip()
        except OSError:
            continue
        kind = "map" if target.endswith("map") else "prog"
        objs.append({
            "kind": kind,
            "id": int(info.get("map_id" if kind == "map" else "prog_id", 0)),
            "type": int(info.get("map_type" if kind == "map" else "prog_type", -1)),
            "memlock": int(info.get("memlock", 0)),
            "max_entries": int(info.get("max_entries", 0)),
        })
    # The same object may be held through several fds: count it once.
    seen, uniq = set(), []
    for o in objs:
        if (o["kind"], o["id"]) not in seen:
            seen.add((o["kind"], o["id"]))
            uniq.append(o)
    return uniq


def cmd_tool(a):
    time.sleep(a.settle)
    t0, c0 = time.monotonic(), cpu_seconds(a.pid)
    time.sleep(a.window)
    t1, c1 = time.monotonic(), cpu_seconds(a.pid)
    st = status(a.pid) or {}
    objs = bpf_objects(a.pid)
    res = {
        "window_s": t1 - t0,
        "cpu_s": c1 - c0,
        "cpu_pct": 100.0 * (c1 - c0) / (t1 - t0),
        "vmrss_kb": st.get("VmRSS"),
        "vmhwm_kb": st.get("VmHWM"),
        "bpf_mapped_kb": bpf_mapped_kb(a.pid),
        "map_memlock": sum(o["memlock"] for o in objs if o["kind"] == "map"),
        "prog_memlock": sum(o["memlock"] for o in objs if o["kind"] == "prog"),
        "maps": [o for o in objs if o["kind"] == "map"],
        "nprogs": sum(1 for o in objs if o["kind"] == "prog"),
    }
    with open(a.out, "w") as f:
        json.dump(res, f, indent=1)
    return 0


stop = False


def on_signal(_s, _f):
    global stop
    stop = True


def cmd_ranks(a):
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    targets = [tuple(int(x) for x in t.split(":")) for t in a.targets]
    peak = {r: {"pid": p, "vmrss_kb": 0, "vmhwm_kb": 0, "pss_kb": 0, "samples": 0}
            for p, r in targets}
    period = a.interval_ms / 1000.0
    nxt = time.monotonic()
    while not stop:
        alive = 0
        for pid, rank in targets:
            st = status(pid)
            ps = pss_kb(pid)
            if st is None:
                continue
            alive += 1
            pk = peak[rank]
            pk["samples"] += 1
            pk["vmrss_kb"] = max(pk["vmrss_kb"], st["VmRSS"])
            pk["vmhwm_kb"] = max(pk["vmhwm_kb"], st["VmHWM"])
            if ps is not None:
                pk["pss_kb"] = max(pk["pss_kb"], ps)
        if alive == 0:
            break
        nxt += period
        d = nxt - time.monotonic()
        if d > 0:
            time.sleep(d)
        else:
            nxt = time.monotonic()
    with open(a.out, "w") as f:
        json.dump({str(k): v for k, v in peak.items()}, f, indent=1)
    return 0


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("tool")
    t.add_argument("pid", type=int)
    t.add_argument("--settle", type=float, default=2.0)
    t.add_argument("--window", type=float, default=10.0)
    t.add_argument("--out", required=True)
    r = sub.add_parser("ranks")
    r.add_argument("--out", required=True)
    r.add_argument("--interval-ms", type=float, default=50.0)
    r.add_argument("targets", nargs="+")
    a = ap.parse_args()
    return cmd_tool(a) if a.cmd == "tool" else cmd_ranks(a)


if __name__ == "__main__":
    sys.exit(main())
