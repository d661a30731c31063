#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Hold a job's ranks still now and then, so that two tools tracing it see
the same memory (tools/validate/run.sh --modes sampled --hold-every S).

    hold.py --root PID --exe PATH --np N --out FILE [--every 1.0] [--hold 0.5]
            [--maps-dir DIR]

It finds the ranks as sampler.py does (processes below PID whose
/proc/PID/exe is PATH). Once all N are running, every --every seconds
(from one hold's start to the next) it sends SIGSTOP to each rank, waits
until every thread of every rank is stopped, holds them --hold seconds and
sends SIGCONT. A stopped process's memory cannot change: every sample any
tool takes between the two instants describes the same pages.

FILE (CSV): hold,start_unix_s,end_unix_s,ranks,settle_s
  start_unix_s  CLOCK_REALTIME once every thread of every rank was seen stopped
  end_unix_s    CLOCK_REALTIME right before the first SIGCONT
  ranks         ranks stopped in this hold
  settle_s      from the first SIGSTOP to start_unix_s
With --maps-dir, each hold also writes DIR/hold-<N>.txt: every rank's
mappings with resident pages, read from /proc/PID/smaps while it is stopped
("rank R pid P" lines, then "start-end perms path rss_kb anonymous_kb"):
what the memory was when the tools disagree.
The tools' time_s plus their run_info.csv's start_time_unix_s is on the
same clock (table.py compares the samples inside [start, end]).

Only the ranks it found are signalled, each checked by pid and start time
before every signal. Whatever ends it (the job's end, SIGTERM, SIGINT, an
error), every rank it stopped is continued first.
"""
import argparse
import importlib.util
import os
import signal
import sys
import time

_spec = importlib.util.spec_from_file_location(
    "v_sampler", os.path.join(os.path.dirname(os.path.abspath(__file__)), "sampler.py"))
_sampler = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_sampler)

stop = False


def on_signal(_sig, _frame):
    global stop
    stop = True


def stat_fields(pid, tid=None):
    """/proc/PID[/task/TID]/stat fields after the command name, or None."""
    path = f"/proc/{pid}/stat" if tid is None else f"/proc/{pid}/task/{tid}/stat"
    try:
        with open(path) as f:
            s = f.read()
    except OSError:
        return None
    return s[s.rfind(")") + 2:].split()


def starttime(pid):
    f = stat_fields(pid)
    return f[19] if f else None


def ours(pid, st):
    """Still the process found (same start time) and not a zombie."""
    f = stat_fields(pid)
    return f is not None and f[19] == st and f[0] != "Z"


def all_stopped(pid):
    """Every thread of PID is stopped (T; t under a tracer), or it is gone."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return True
    for t in tids:
        f = stat_fields(pid, t)
        if f is not None and f[0] not in ("T", "t", "Z", "X"):
            return False
    return True


def signal_all(ranks, sig):
    done = []
    for pid, st in ranks.items():
        if ours(pid, st):
            try:
                os.kill(pid, sig)
                done.append(pid)
            except OSError:
                pass
    return done


def write_maps(path, ranks, stopped):
    """The stopped ranks' resident mappings (smaps), one file per hold."""
    with open(path, "w") as f:
        for pid in stopped:
            f.write(f"rank {_sampler.rank_of(pid)} pid {pid}\n")
            try:
                with open(f"/proc/{pid}/smaps") as sm:
                    head, rss = None, 0
                    for line in sm:
                        k = line.split()
                        if k and "-" in k[0] and not k[0].endswith(":"):
                            head = k[0] + " " + k[1] + " " + (k[5] if len(k) > 5 else "-")
                        elif k and k[0] == "Rss:":
                            rss = int(k[1])
                        elif k and k[0] == "Anonymous:" and head and rss:
                            f.write(f"{head} {rss} {k[1]}\n")
            except OSError:
                pass


def find_ranks(root, exe, ranks):
    for p in _sampler.descendants(root):
        if p in ranks:
            continue
        try:
            if os.readlink(f"/proc/{p}/exe") != exe:
                continue
        except OSError:
            continue
        st = starttime(p)
        if st is not None:
            ranks[p] = st


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", type=int, required=True)
    ap.add_argument("--exe", required=True)
    ap.add_argument("--np", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--every", type=float, default=1.0, help="seconds from one hold's start to the next")
    ap.add_argument("--hold", type=float, default=0.5, help="seconds the ranks stay stopped")
    ap.add_argument("--maps-dir", help="each hold's resident mappings of every rank")
    a = ap.parse_args()
    if not 0 < a.hold < a.every:
        print("hold.py: want 0 < --hold < --every", file=sys.stderr)
        return 2
    exe = os.path.realpath(a.exe)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    if a.maps_dir:
        os.makedirs(a.maps_dir, exist_ok=True)
    ranks = {}          # pid -> start time
    stopped = []
    n = 0
    with open(a.out, "w") as out:
        out.write("hold,start_unix_s,end_unix_s,ranks,settle_s\n")
        try:
            t0 = time.monotonic()
            while not stop and len(ranks) < a.np:
                find_ranks(a.root, exe, ranks)
                if not _sampler.alive(a.root) or time.monotonic() - t0 > 60:
                    return 0 if not ranks else 1
                time.sleep(0.02)
            nxt = time.monotonic() + a.every
            while not stop and any(ours(p, s) for p, s in ranks.items()):
                time.sleep(max(0.0, nxt - time.monotonic()))
                if stop:
                    break
                nxt += a.every
                t_sig = time.time()
                stopped = signal_all(ranks, signal.SIGSTOP)
                # A thread in an uninterruptible sleep stops when it leaves it.
                while not stop and not all(all_stopped(p) for p in stopped):
                    time.sleep(0.001)
                start = time.time()
                if a.maps_dir:
                    write_maps(os.path.join(a.maps_dir, f"hold-{n + 1}.txt"), ranks, stopped)
                time.sleep(max(0.0, start + a.hold - time.time()))
                end = time.time()
                signal_all({p: ranks[p] for p in stopped}, signal.SIGCONT)
                live = [p for p in stopped if ours(p, ranks[p])]
                stopped = []
                if live and not stop:
                    n += 1
                    out.write(f"{n},{start:.6f},{end:.6f},{len(live)},{start - t_sig:.6f}\n")
                    out.flush()
        finally:
            if stopped:
                signal_all({p: ranks[p] for p in stopped}, signal.SIGCONT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
