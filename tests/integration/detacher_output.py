#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Run the tool (the command given) with its stdout on a pipe that is full,
so that the tool blocks writing its end-of-run summary: by then it has
forked the child that holds its BPF descriptors while the kernel detaches
them. Exit 1 if that child holds the tool's stdout (the pipe) or stderr:
a reader of the tool's output (`memattr-bpf ... | tee log`) would wait for
the kernel's detach, about a second, after the tool has exited.

    detacher_output.py STDERR_FILE COMMAND ARGS...
"""
import fcntl
import os
import subprocess
import sys
import time

TIMEOUT_S = 60


def children(pid):
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        # Fields after the command name, which may hold spaces: state, ppid.
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            out.append(int(d))
    return out


def proc_text(pid, name):
    """/proc/PID/NAME (comm, wchan), "" once the process is gone."""
    try:
        with open(f"/proc/{pid}/{name}") as f:
            return f.read().strip()
    except OSError:
        return ""


def fill(fd):
    """Write into the pipe until it has no room left."""
    flags = fcntl.fcntl(fd, fcntl.F_GETFL)
    fcntl.fcntl(fd, fcntl.F_SETFL, flags | os.O_NONBLOCK)
    try:
        while True:
            os.write(fd, b"x" * 4096)
    except BlockingIOError:
        pass
    try:
        while True:
            os.write(fd, b"x")
    except BlockingIOError:
        pass
    fcntl.fcntl(fd, fcntl.F_SETFL, flags)


def held_outputs(pid, pipe_ino, err_path):
    held = []
    fddir = f"/proc/{pid}/fd"
    for fd in os.listdir(fddir):
        try:
            target = os.readlink(f"{fddir}/{fd}")
        except OSError:
            continue
        if target == f"pipe:[{pipe_ino}]" or target == err_path:
            held.append(f"fd {fd} -> {target}")
    return held


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    err_path = os.path.abspath(sys.argv[1])
    r, w = os.pipe()
    pipe_ino = os.fstat(w).st_ino
    fill(w)
    with open(err_path, "wb") as err:
        tool = subprocess.Popen(sys.argv[2:], stdout=w, stderr=err)
    os.close(w)
    deadline = time.monotonic() + TIMEOUT_S
    # The summary goes out at the end of the run, after the fork (the
    # kernel function is pipe_write, anon_pipe_write from 6.16).
    while not proc_text(tool.pid, "wchan").endswith("pipe_write"):
        if tool.poll() is not None:
            sys.exit(f"the tool exited ({tool.returncode}) without blocking on its full stdout")
        if time.monotonic() > deadline:
            tool.kill()
            sys.exit("the tool never blocked on its full stdout")
        time.sleep(0.02)
    detachers = [c for c in children(tool.pid) if proc_text(c, "comm") == "memattr-bpf"]
    held = []
    for c in detachers:
        held += [f"pid {c} {h}" for h in held_outputs(c, pipe_ino, err_path)]
    # Let the tool finish: read the pipe to its end.
    while os.read(r, 65536):
        pass
    rc = tool.wait()
    if not detachers:
        sys.exit("the tool blocked on its output with no child holding its BPF descriptors")
    if held:
        sys.exit("the tool's detaching child holds its output: " + "; ".join(held))
    if rc != 0:
        sys.exit(f"the tool exited {rc}")
    print(f"detaching child(ren) {detachers} hold neither stdout nor stderr")


if __name__ == "__main__":
    main()
