#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Run memattr-bpf ... --ready-fd 3 with fd 3 a pipe already full: its
"ready" line, written once every target is traced and before its first
sample round, blocks until the file --release names exists (or the tool
is signalled). A test so holds the tool between its attach and its first
sample, as a loaded node does (8 LULESH ranks on 2 cores: 4.4 s of attach
and the job ended before the first round).

Usage: held_ready.py --release FILE --pid-file FILE -- CMD ARGS...

The command's pid goes to --pid-file; the exit status is the command's
(128 + N when a signal N ended it).
"""
import argparse
import fcntl
import os
import subprocess
import sys
import time

from detacher_output import fill


def full_pipe():
    """A pipe whose write end cannot take one more byte, and both ends."""
    r, w = os.pipe()
    # Blocking again after: the command's write must block, not fail with
    # EAGAIN (the flag is the open file's, shared with its descriptor).
    fill(w)
    return r, w


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--release", required=True)
    ap.add_argument("--pid-file", required=True)
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    if not cmd:
        sys.exit("held_ready.py: no command")
    r, w = full_pipe()
    # fd 3 in the command; ours moved out of its way first.
    r = fcntl.fcntl(r, fcntl.F_DUPFD_CLOEXEC, 10) if r == 3 else r
    if w != 3:
        os.dup2(w, 3)
        os.close(w)
    proc = subprocess.Popen(cmd, pass_fds=(3,))
    os.close(3)
    with open(a.pid_file + ".tmp", "w") as f:
        f.write("%d\n" % proc.pid)
    os.rename(a.pid_file + ".tmp", a.pid_file)
    while proc.poll() is None and not os.path.exists(a.release):
        time.sleep(0.02)
    # Released (or the command is gone): the pipe read empty, its write goes through.
    fcntl.fcntl(r, fcntl.F_SETFL, fcntl.fcntl(r, fcntl.F_GETFL) | os.O_NONBLOCK)
    while True:
        try:
            if not os.read(r, 65536):
                break		# every writer closed it
        except BlockingIOError:
            if proc.poll() is not None:
                break
            time.sleep(0.01)
    rc = proc.wait()
    sys.exit(128 - rc if rc < 0 else rc)


if __name__ == "__main__":
    main()
