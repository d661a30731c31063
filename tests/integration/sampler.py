#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""/proc sampler: the kernel's own view of each rank, to judge memattr-bpf by.

    sampler.py --out FILE [--interval-ms 20] PID:RANK [PID:RANK ...]

Every interval it reads VmRSS and VmHWM from /proc/PID/status of each rank and
appends "mono_s,pid,rank,vmrss_kb,vmhwm_kb" (CLOCK_MONOTONIC seconds, the clock
the workloads log with). It stops on SIGTERM/SIGINT or when every PID is gone.
Reading status costs ~12 us a process, so 20 ms is cheap enough not to
disturb what it measures.
"""
import argparse
import signal
import sys
import time

stop = False


def on_signal(_sig, _frame):
    global stop
    stop = True


def read_status(pid):
    """(VmRSS kB, VmHWM kB), or None once the process is gone or a zombie."""
    try:
        with open(f"/proc/{pid}/status") as f:
            rss = hwm = None
            for line in f:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1])
                elif line.startswith("VmHWM:"):
                    hwm = int(line.split()[1])
            if rss is None or hwm is None:
                return None
            return rss, hwm
    except OSError:
        return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--interval-ms", type=float, default=20.0)
    ap.add_argument("targets", nargs="+", help="PID:RANK")
    a = ap.parse_args()
    targets = []
    for t in a.targets:
        pid, rank = t.split(":")
        targets.append((int(pid), int(rank)))
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    period = a.interval_ms / 1000.0
    with open(a.out, "w") as out:
        out.write("mono_s,pid,rank,vmrss_kb,vmhwm_kb\n")
        nxt = time.monotonic()
        while not stop:
            alive = 0
            for pid, rank in targets:
                st = read_status(pid)
                if st is None:
                    continue
                alive += 1
                out.write(f"{time.monotonic():.6f},{pid},{rank},{st[0]},{st[1]}\n")
            out.flush()
            if alive == 0:
                break
            nxt += period
            delay = nxt - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            else:
                nxt = time.monotonic()
    return 0


if __name__ == "__main__":
    sys.exit(main())
