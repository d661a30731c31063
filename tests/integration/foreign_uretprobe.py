#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Play another tracer on the node: put a uretprobe on a library function in
given processes only (perf_event_open on the uprobe PMU, bound to each pid,
so nobody else's processes are touched), hold it until SIGTERM/SIGINT.

    foreign_uretprobe.py LIBRARY FUNCTION PID [PID...]

A uretprobe replaces the return address on the user stack with the
kernel's trampoline in the [uprobes] page for as long as the function runs,
exactly as bpftrace/bcc memleak or `perf probe` do. Prints "ready" once every
probe is in place. Needs root; the standard library only."""
import ctypes
import os
import signal
import struct
import subprocess
import sys

NR_PERF_EVENT_OPEN = 298        # x86_64
PERF_FLAG_FD_CLOEXEC = 1 << 3


def file_offset(lib, func):
    """Offset in the file of FUNC's entry (what the uprobe PMU wants)."""
    sym = None
    for line in subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True,
                               text=True, check=True).stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2].split("@")[0] == func and parts[1] in "TtWi":
            sym = int(parts[0], 16)
            break
    if sym is None:
        sys.exit(f"foreign_uretprobe: no {func} in {lib}")
    for line in subprocess.run(["readelf", "-lW", lib], capture_output=True, text=True,
                               check=True).stdout.splitlines():
        f = line.split()
        if f and f[0] == "LOAD":
            off, vaddr, fsz = int(f[1], 16), int(f[2], 16), int(f[4], 16)
            if vaddr <= sym < vaddr + fsz:
                return sym - vaddr + off
    sys.exit(f"foreign_uretprobe: {func} at {sym:#x} is in no LOAD segment of {lib}")


def pmu(name):
    with open(f"/sys/bus/event_source/devices/uprobe/{name}") as f:
        return f.read().strip()


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    lib, func, pids = sys.argv[1], sys.argv[2], [int(p) for p in sys.argv[3:]]
    ptype = int(pmu("type"))
    fmt = pmu("format/retprobe")            # "config:0"
    retbit = 1 << int(fmt.split(":")[1])
    path = ctypes.create_string_buffer(lib.encode())
    offset = file_offset(lib, func)
    libc = ctypes.CDLL(None, use_errno=True)
    fds = []
    for pid in pids:
        attr = bytearray(128)
        struct.pack_into("IIQ", attr, 0, ptype, 128, retbit)
        struct.pack_into("QQ", attr, 56, ctypes.addressof(path), offset)
        buf = ctypes.create_string_buffer(bytes(attr), 128)
        fd = libc.syscall(NR_PERF_EVENT_OPEN, buf, pid, -1, -1, PERF_FLAG_FD_CLOEXEC)
        if fd < 0:
            sys.exit(f"foreign_uretprobe: perf_event_open(uretprobe {lib}:{func}+{offset:#x}, "
                     f"pid {pid}): {os.strerror(ctypes.get_errno())}")
        fds.append(fd)
    print(f"ready: uretprobe on {os.path.basename(lib)}:{func} (file offset {offset:#x}) "
          f"in pids {' '.join(map(str, pids))}", flush=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    signal.signal(signal.SIGINT, lambda *_: sys.exit(0))
    while True:
        signal.pause()


if __name__ == "__main__":
    main()
