#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Run time of one tracer's BPF programs (kernel.bpf_stats_enabled must be on).

    bpfstats.py snap PID > FILE        # run_cnt and run_time_ns of every program PID holds
    bpfstats.py diff BEFORE AFTER      # name<TAB>calls<TAB>run_ns, one line per program that ran

Programs are found through the holder's /proc/PID/fdinfo (prog_id lines), so
another tracer's programs of the same names on this machine do not mix in."""
import json
import os
import subprocess
import sys


def held_prog_ids(pid):
    ids = set()
    fddir = f"/proc/{pid}/fd"
    for fd in os.listdir(fddir):
        try:
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                for line in f:
                    if line.startswith("prog_id:"):
                        ids.add(int(line.split()[1]))
        except OSError:
            continue
    return ids


def snap(pid):
    ids = held_prog_ids(pid)
    r = subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True, check=True)
    out = {}
    for p in json.loads(r.stdout or "[]"):
        if p["id"] in ids:
            out[str(p["id"])] = [p.get("name", "?"), p.get("run_cnt", 0), p.get("run_time_ns", 0)]
    print(json.dumps(out))


def diff(a, b):
    before = json.load(open(a))
    after = json.load(open(b))
    for pid, (name, cnt, ns) in sorted(after.items(), key=lambda kv: kv[1][0]):
        c0, n0 = before.get(pid, [name, 0, 0])[1:]
        if cnt - c0 > 0:
            print(f"{name}\t{cnt - c0}\t{ns - n0}")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "snap":
        snap(int(sys.argv[2]))
    elif len(sys.argv) == 4 and sys.argv[1] == "diff":
        diff(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
