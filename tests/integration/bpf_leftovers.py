#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Report BPF programs named ma_* (memattr-bpf's) and links to them that are
still loaded. Exit 1 if any is held by no live memattr-bpf process: pinned,
leaked to another process, or held by a tracer that should have exited.
Programs held by a live memattr-bpf are another run's (this machine may be
shared) and only reported. Uses bpftool's JSON output.

    bpf_leftovers.py              # the check above
    bpf_leftovers.py --held-by PID  # exit 0 if PID holds some ma_* program"""
import json
import os
import subprocess
import sys


def bpftool(*args):
    r = subprocess.run(["bpftool", "-j", *args], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"bpftool {' '.join(args)} failed: {r.stderr.strip()}")
    return json.loads(r.stdout or "[]")


def comm(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return None


def held_by(pid):
    """Exit 0 if at least one ma_* program is held by pid: proves the
    leftover check looks for the names the tool really uses."""
    progs = [p for p in bpftool("prog", "show") if p.get("name", "").startswith("ma_")
             and any(h["pid"] == pid for h in p.get("pids", []))]
    print(f"{len(progs)} ma_* program(s) held by pid {pid}: "
          + " ".join(sorted({p['name'] for p in progs})))
    return 0 if progs else 1


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--held-by":
        return held_by(int(sys.argv[2]))
    ours_only = os.environ.get("MEMATTR_LEFTOVER_STRICT") == "1"
    progs = {p["id"]: p for p in bpftool("prog", "show") if p.get("name", "").startswith("ma_")}
    links = [lk for lk in bpftool("link", "show") if lk.get("prog_id") in progs]
    bad = 0
    for kind, items in (("prog", progs.values()), ("link", links)):
        for it in items:
            holders = [(h["pid"], h.get("comm", "?")) for h in it.get("pids", [])]
            live_tracer = [h for h in holders if comm(h[0]) == "memattr-bpf"]
            name = it.get("name") or progs[it["prog_id"]].get("name")
            desc = f"{kind} id {it['id']} ({name}) held by {holders or 'no process (pinned?)'}"
            if live_tracer and not ours_only:
                print(f"note: {desc}: another live memattr-bpf run, ignored")
            else:
                print(f"LEFTOVER: {desc}")
                bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
