#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""CPU time of a process and every descendant alive now, in seconds: user +
system, their own and their reaped children's (/proc/PID/stat).

    tree_cpu.py PID

What daemon_cpu.sh needs of a running job at its settle mark: the job's CPU
so far, to take from its total at the end (which the launcher's wait gives)."""
import os
import sys


def stat_fields(pid):
    """The fields after the command name (which may hold spaces and parentheses)."""
    with open(f"/proc/{pid}/stat") as f:
        s = f.read()
    return s[s.rindex(")") + 2:].split()


def main():
    if len(sys.argv) != 2 or not sys.argv[1].isdigit():
        print("usage: tree_cpu.py PID", file=sys.stderr)
        return 2
    root = int(sys.argv[1])
    kids, ticks = {}, {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            f = stat_fields(d)
        except OSError:
            continue
        # f[1] is ppid (field 4); f[11:15] utime stime cutime cstime (fields 14-17).
        kids.setdefault(int(f[1]), []).append(int(d))
        ticks[int(d)] = sum(int(x) for x in f[11:15])
    if root not in ticks:
        print(f"tree_cpu.py: no process {root}", file=sys.stderr)
        return 1
    total, todo = 0, [root]
    while todo:
        p = todo.pop()
        total += ticks.get(p, 0)
        todo += kids.get(p, [])
    print(f"{total / os.sysconf('SC_CLK_TCK'):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
