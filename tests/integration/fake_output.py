#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Make a synthetic memattr-bpf run (output dir, sampler file, mpi_phases logs)
that satisfies every check of check_csv.py, or breaks exactly one of them,
so the checker itself is tested: a checker that cannot fail proves nothing.

    fake_output.py DIR --ranks N [--mutate NAME]

Writes DIR/out/, DIR/sampler.csv and DIR/logs/phases-rank-R.csv.
"""
import argparse
import os
import sys

MIB = 1024 * 1024
MUTATIONS = ["none", "bad_sum", "bad_pss_sum", "bad_header", "world_writable",
             "missing_summary", "missing_rank", "peak_low", "app_wrong",
             "truncated", "bad_component", "negative", "summary_peak_low",
             "summary_final", "short_row", "wrong_pid", "no_malloc", "symlink",
             "alloc_mem_to_app"]

ORIGIN = 1000.0          # CLOCK_MONOTONIC time of time_s 0
PLATEAU = 0.8
PHASE = 0.05


def events(rank, alloc_mem):
    t = ORIGIN + 0.5
    ev = [("ready", ORIGIN - 0.5), ("start", t)]
    t += PLATEAU
    phases = ["malloc", "mmap", "free", "munmap"]
    if alloc_mem:
        phases += ["alloc_mem", "free_mem"]
    for ph in phases:
        ev.append((ph + "_begin", t))
        t += PHASE
        ev.append((ph + "_done", t))
        t += PLATEAU
    ev.append(("end", t))
    return ev


def held(rank, mono, ev, mutate):
    """Bytes the workload's phases hold at a monotonic time."""
    e = dict(ev)
    s = rank + 1
    m = 0 if mutate == "no_malloc" else 16 * MIB * s
    p = 8 * MIB * s
    h = 0
    if e["malloc_done"] <= mono < e["free_done"]:
        h += m
    if e["mmap_done"] <= mono < e["munmap_done"]:
        h += p
    return h


def held_mpi(rank, mono, ev):
    e = dict(ev)
    if "alloc_mem_done" in e and e["alloc_mem_done"] <= mono < e["free_mem_done"]:
        return 4 * MIB * (rank + 1)
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--mutate", default="none", choices=MUTATIONS)
    ap.add_argument("--alloc-mem", action="store_true", help="with a 4 MiB MPI_Alloc_mem phase")
    a = ap.parse_args()
    out = os.path.join(a.dir, "out")
    logs = os.path.join(a.dir, "logs")
    os.makedirs(out, exist_ok=True)
    os.makedirs(logs, exist_ok=True)
    mut = a.mutate
    sampler = ["mono_s,pid,rank,vmrss_kb,vmhwm_kb"]
    summary = ["rank,pid,component,peak_rss_bytes,peak_rss_time_s,peak_pss_bytes,"
               "peak_pss_time_s,final_rss_bytes,final_pss_bytes"]
    for rank in range(a.ranks):
        pid = 4000 + rank
        ev = events(rank, a.alloc_mem or mut == "alloc_mem_to_app")
        with open(os.path.join(logs, f"phases-rank-{rank}.csv"), "w") as f:
            f.write("event,mono_s,rank,pid,bytes\n")
            for name, t in ev:
                f.write(f"{name},{t:.6f},{rank},{pid},0\n")
        end = dict(ev)["end"] + 0.3
        base = {"mpi": 12 * MIB, "libc": 2 * MIB, "stack": 128 * 1024,
                "lib:libhwloc.so": 512 * 1024, "unattributed": 256 * 1024,
                "app": 1 * MIB + rank * 4096}
        rows = ["time_s,rank,pid,component,rss_bytes,pss_bytes"]
        peaks = {}
        final = {}
        n = int((end - ORIGIN) / 0.1)
        for i in range(n + 1):
            t = i * 0.1
            comps = dict(base)
            h = held(rank, ORIGIN + t, ev, mut)
            if mut == "app_wrong":
                comps["libc"] += h
            else:
                comps["app"] += h
            hm = held_mpi(rank, ORIGIN + t, ev)
            comps["app" if mut == "alloc_mem_to_app" else "mpi"] += hm
            pss = {c: v // 2 if c in ("mpi", "libc") else v for c, v in comps.items()}
            comps["total"] = sum(comps.values())
            pss["total"] = sum(pss.values())
            if mut == "bad_sum" and rank == 0 and i == 7:
                comps["total"] += 4096
            if mut == "bad_pss_sum" and rank == a.ranks - 1 and i == 3:
                pss["total"] -= 1
            for c in ["total", "app", "mpi", "libc", "lib:libhwloc.so", "stack", "unattributed"]:
                comp = c
                if mut == "bad_component" and c == "stack":
                    comp = "heap"
                rss = comps[c]
                if mut == "negative" and c == "unattributed" and i == 2:
                    rss = -1
                rows.append(f"{t:.3f},{rank},{pid},{comp},{rss},{pss[c]}")
                if c not in peaks or comps[c] > peaks[c][0]:
                    peaks[c] = (comps[c], t, pss[c], t)
                final[c] = (comps[c], pss[c])
        if mut == "short_row":
            rows.insert(5, f"0.000,{rank},{pid},app")
        body = "\n".join(rows) + "\n"
        if mut == "truncated" and rank == 0:
            body = body[:-20]
        path = os.path.join(out, f"rank-{rank}.csv")
        if not (mut == "missing_rank" and rank == a.ranks - 1):
            with open(path, "w") as f:
                if mut == "bad_header" and rank == 0:
                    body = body.replace("rss_bytes", "rss", 1)
                f.write(body)
            os.chmod(path, 0o666 if mut == "world_writable" else 0o644)
        for c, (prss, prt, ppss, ppt) in peaks.items():
            if mut == "summary_peak_low" and c == "total":
                prss -= 4096
            frss, fpss = final[c]
            if mut == "summary_final" and c == "total":
                frss += 8192
            summary.append(f"{rank},{pid},{c},{prss},{prt:.3f},{ppss},{ppt:.3f},{frss},{fpss}")
        # The kernel's view: VmRSS equals the true total, in kB.
        t = ORIGIN - 0.2
        while t < end:
            total = sum(base.values()) + held(rank, t, ev, "none") + held_mpi(rank, t, ev)
            if mut == "peak_low":
                total = int(total * 1.06) // 4096 * 4096
            spid = pid + 1 if mut == "wrong_pid" else pid
            sampler.append(f"{t:.6f},{spid},{rank},{total // 1024},{total // 1024}")
            t += 0.02
    if mut != "missing_summary":
        with open(os.path.join(out, "summary.csv"), "w") as f:
            f.write("\n".join(summary) + "\n")
    if mut == "symlink":
        os.rename(os.path.join(out, "summary.csv"), os.path.join(a.dir, "summary.real"))
        os.symlink(os.path.join(a.dir, "summary.real"), os.path.join(out, "summary.csv"))
    with open(os.path.join(a.dir, "sampler.csv"), "w") as f:
        f.write("\n".join(sampler) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
