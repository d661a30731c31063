#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Write a synthetic memattr-bpf output directory of any size, for the
report's scale and in-progress checks (the real 4-rank run covers the rest).

    fake_run.py DIR --ranks N [--seconds S] [--interval-ms MS] [--in-progress]
                [--calls] [--info] [--extra-columns]

Rank R holds a baseline, grows its app heap in a ramp whose peak is at a
time and size that depend on R, and MPI memory that steps up at MPI_Init and
at an Alltoall; the components always sum to total. With --in-progress the
files end in a cut line, as while the tracer is still writing.
"""
import argparse
import os

MIB = 1024 * 1024
COMPS = ["unattributed", "app", "stack", "libc", "mpi", "lib:libstdc++.so", "lib:libm.so",
         "lib:libz.so"]


def sample(rank, t, seconds):
    peak_t = seconds * (0.3 + 0.5 * ((rank * 37) % 101) / 100)
    heap = max(0.0, 1 - abs(t - peak_t) / (seconds * 0.25)) * (20 + (rank % 17) * 3) * MIB
    mpi = 6 * MIB + (4 * MIB if t > seconds * 0.4 else 0) + (rank % 5) * 256 * 1024
    v = {
        "unattributed": 2 * MIB + int(heap * 0.3),
        "app": 64 * 1024 + int(heap * 0.7),
        "stack": 132 * 1024,
        "libc": 1900 * 1024,
        "mpi": int(mpi),
        "lib:libstdc++.so": 880 * 1024,
        "lib:libm.so": 120 * 1024,
        "lib:libz.so": 96 * 1024,
    }
    v = {k: x // 4096 * 4096 for k, x in v.items()}
    return v


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--ranks", type=int, required=True)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--interval-ms", type=int, default=100)
    ap.add_argument("--in-progress", action="store_true")
    ap.add_argument("--calls", action="store_true")
    ap.add_argument("--info", action="store_true")
    ap.add_argument("--extra-columns", action="store_true")
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    extra = ",cpu,note" if a.extra_columns else ""
    summary = ["rank,pid,component,peak_rss_bytes,peak_rss_time_s,peak_pss_bytes,"
               "peak_pss_time_s,final_rss_bytes,final_pss_bytes"]
    n = int(a.seconds * 1000 / a.interval_ms)
    for r in range(a.ranks):
        pid = 10000 + r
        peak = {}
        lines = ["time_s,rank,pid,component,rss_bytes,pss_bytes" + extra]
        for i in range(n):
            # Ranks sample on a common grid, a few ms apart.
            t = i * a.interval_ms / 1000 + (r % 7) * 0.003
            v = sample(r, t, a.seconds)
            tot = sum(v.values())
            rows = [("total", tot)] + [(c, v[c]) for c in COMPS]
            for c, x in rows:
                pss = x // 2 if c in ("libc", "mpi") else x
                lines.append(f"{t:.3f},{r},{pid},{c},{x},{pss}" + (",0.5,x" if extra else ""))
                if c not in peak or x > peak[c][0]:
                    peak[c] = (x, t, pss)
        body = "\n".join(lines) + "\n"
        if a.in_progress:
            body += f"{n * a.interval_ms / 1000:.3f},{r},{pid},total,123"
        with open(os.path.join(a.dir, f"rank-{r}.csv"), "w") as f:
            f.write(body)
        for c, (x, t, pss) in peak.items():
            summary.append(f"{r},{pid},{c},{x},{t:.3f},{pss},{t:.3f},{x},{pss}")
    if not a.in_progress:
        with open(os.path.join(a.dir, "summary.csv"), "w") as f:
            f.write("\n".join(summary) + "\n")
    if a.calls:
        rows = ["rank,pid,function,calls,gained_bytes,released_bytes,net_bytes,peak_bytes,"
                "first_growth_s,last_growth_s"]
        for r in range(a.ranks):
            rows.append(f"{r},{10000 + r},MPI_Init,1,{6 * MIB},{MIB},{5 * MIB},{6 * MIB},0.010,0.010")
            rows.append(f"{r},{10000 + r},MPI_Alltoall,40,{4 * MIB},0,{4 * MIB},{4 * MIB},"
                        f"{a.seconds * 0.4:.3f},{a.seconds * 0.4:.3f}")
            rows.append(f"{r},{10000 + r},MPI_Allreduce,500,{64 * 1024},{64 * 1024},0,{64 * 1024},0.5,9.5")
            rows.append(f"{r},{10000 + r},MPI_Barrier,3,0,0,0,0,,")
        with open(os.path.join(a.dir, "mpi_calls.csv"), "w") as f:
            f.write("\n".join(rows) + "\n")
    if a.info:
        with open(os.path.join(a.dir, "run_info.csv"), "w") as f:
            f.write("key,value\nevents,1234567\ndropped_events,321\nunwind_failures,12\n"
                    "interval_ms,%d\n" % a.interval_ms)
    with open(os.path.join(a.dir, "heap_sites.csv"), "w") as f:
        f.write("rank,pid,site,bytes\n0,10000,main+0x10,1024\n")


if __name__ == "__main__":
    main()
