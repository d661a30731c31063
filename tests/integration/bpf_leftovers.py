#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Report BPF programs named ma_* (memattr-bpf's) and links to them that are
still loaded. Exit 1 if any is held by no live memattr-bpf process: pinned,
leaked to another process, or held by a tracer that should have exited.
Programs held by a live memattr-bpf are another run's (this machine may be
shared) and only reported. Uses bpftool's JSON output.

    bpf_leftovers.py              # the check above
    bpf_leftovers.py --held-by PID  # exit 0 if PID holds some ma_* program
    bpf_leftovers.py --links-held-by PID [TYPE]  # exit 0 if PID holds a link to an
                                                 # ma_* program (of link_type TYPE)
    bpf_leftovers.py --linked-by PID PROG        # exit 0 if PID holds a link to PROG
    bpf_leftovers.py --count-linked-by PID REGEX TYPE  # prints how many links of
                                                 # link_type TYPE PID holds to programs
                                                 # whose names match REGEX
    bpf_leftovers.py --xlated-of PID PROG        # prints the size of program PROG
                                                 # (bytes_xlated) that PID holds"""
import json
import os
import re
import subprocess
import sys


def bpftool(*args):
    r = subprocess.run(["bpftool", "-j", *args], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"bpftool {' '.join(args)} failed: {r.stderr.strip()}")
    return json.loads(r.stdout or "[]")


def fd_holders():
    """{prog_id: {pid}} from /proc/*/fdinfo: bpftool's own "pids" field needs
    BPF iterator support that Debian's bpftool 7.1 does not show here."""
    held = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        fddir = f"/proc/{d}/fd"
        try:
            fds = os.listdir(fddir)
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(f"{fddir}/{fd}")
                if target not in ("anon_inode:bpf-prog", "anon_inode:bpf_link"):
                    continue
                with open(f"/proc/{d}/fdinfo/{fd}") as f:
                    for line in f:
                        if line.startswith("prog_id:"):
                            held.setdefault(int(line.split()[1]), set()).add(int(d))
            except OSError:
                continue
    return held


def comm(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return None


def held_by(pid):
    """Exit 0 if at least one ma_* program is held by pid: proves the
    leftover check looks for the names the tool really uses."""
    held = fd_holders()
    progs = [p for p in bpftool("prog", "show") if p.get("name", "").startswith("ma_")
             and pid in held.get(p["id"], ())]
    print(f"{len(progs)} ma_* program(s) held by pid {pid}: "
          + " ".join(sorted({p['name'] for p in progs})))
    return 0 if progs else 1


def links_held_by(pid, want=None, prog_name=None, pattern=None):
    """Links (to ma_* programs, to prog_name only, or to programs whose names
    match the regular expression pattern) that pid holds, counted by the link_type its fdinfo shows (e.g.
    uprobe_multi for the opt-in modes' probes)."""
    names = {p["id"]: p.get("name", "") for p in bpftool("prog", "show")}
    counts = {}
    fddir = f"/proc/{pid}/fd"
    for fd in os.listdir(fddir):
        try:
            if os.readlink(f"{fddir}/{fd}") != "anon_inode:bpf_link":
                continue
            info = {}
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                for line in f:
                    k, _, v = line.partition(":")
                    info[k.strip()] = v.strip()
        except OSError:
            continue
        name = names.get(int(info.get("prog_id", "-1")), "")
        if pattern:
            wanted = re.match(pattern, name)
        else:
            wanted = name == prog_name if prog_name else name.startswith("ma_")
        if not wanted:
            continue
        kind = info.get("link_type", "?")
        counts[kind] = counts.get(kind, 0) + 1
    if pattern:
        print(counts.get(want, 0))
        return 0
    print(f"links to {prog_name or 'ma_* programs'} held by pid {pid}: "
          + (" ".join(f"{k}={v}" for k, v in sorted(counts.items())) or "none"))
    if want is not None:
        return 0 if counts.get(want) else 1
    return 0 if counts else 1


def xlated_of(pid, prog_name):
    """The size of program prog_name as the verifier left it (bytes_xlated:
    the code it proved dead is gone) in pid's hold; exit 1 if pid holds none."""
    held = fd_holders()
    sizes = [p.get("bytes_xlated", 0) for p in bpftool("prog", "show")
             if p.get("name") == prog_name and pid in held.get(p["id"], ())]
    if not sizes:
        print(f"pid {pid} holds no program {prog_name}", file=sys.stderr)
        return 1
    print(max(sizes))
    return 0


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--xlated-of":
        return xlated_of(int(sys.argv[2]), sys.argv[3])
    if len(sys.argv) in (3, 4) and sys.argv[1] == "--links-held-by":
        return links_held_by(int(sys.argv[2]), sys.argv[3] if len(sys.argv) == 4 else None)
    if len(sys.argv) == 5 and sys.argv[1] == "--count-linked-by":
        return links_held_by(int(sys.argv[2]), sys.argv[4], pattern=sys.argv[3])
    if len(sys.argv) == 4 and sys.argv[1] == "--linked-by":
        return links_held_by(int(sys.argv[2]), prog_name=sys.argv[3])
    if len(sys.argv) == 3 and sys.argv[1] == "--held-by":
        return held_by(int(sys.argv[2]))
    ours_only = os.environ.get("MEMATTR_LEFTOVER_STRICT") == "1"
    progs = {p["id"]: p for p in bpftool("prog", "show") if p.get("name", "").startswith("ma_")}
    links = [lk for lk in bpftool("link", "show") if lk.get("prog_id") in progs]
    held = fd_holders()
    bad = 0
    for kind, items in (("prog", progs.values()), ("link", links)):
        for it in items:
            pid_ids = {h["pid"] for h in it.get("pids", [])}
            pid_ids |= held.get(it["id"] if kind == "prog" else it["prog_id"], set())
            holders = [(p, comm(p) or "?") for p in sorted(pid_ids)]
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
