#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Which of libc's memory calls a running process has had rewritten, and
where each now jumps (as root).

    libc_hooks.py PID FUNC...

Memory interposers (UCX's libucm "bistro" mode, Open MPI's memory patcher)
overwrite the first bytes of libc's mmap, munmap, brk, ... with a jump into
their own code. For each FUNC this compares the bytes in the process's
memory with the bytes in libc's file and prints

    FUNC -> FILE+0xOFF (nearest exported symbol)      or      FUNC: not hooked

Exits 1 if any FUNC is not hooked (or the process has no libc), else 0.
"""
import os
import struct
import subprocess
import sys


def read_maps(pid):
    out = []
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            p = line.split(maxsplit=5)
            lo, hi = (int(x, 16) for x in p[0].split("-"))
            out.append((lo, hi, int(p[2], 16), p[5].strip() if len(p) > 5 else ""))
    return out


def dynsyms(path):
    """{name: offset} of the file's defined dynamic symbols (binutils' nm)."""
    try:
        res = subprocess.run(["nm", "-D", "--defined-only", path],
                             capture_output=True, text=True, check=False)
    except OSError:
        return {}
    syms = {}
    for line in res.stdout.splitlines():
        p = line.split()
        if len(p) == 3:
            syms.setdefault(p[2].split("@")[0], int(p[0], 16))
    return syms


def base_of(maps, path):
    return min(lo - off for lo, hi, off, name in maps if name == path)


def describe(pid, maps, addr):
    for lo, hi, off, name in maps:
        if lo <= addr < hi:
            if not name.startswith("/"):
                return f"{name or '[anon]'}+{addr - lo:#x}"
            rel = addr - base_of(maps, name)
            near = max(((o, n) for n, o in dynsyms(f"/proc/{pid}/root{name}").items()
                        if o <= rel), default=None)
            sym = f" ({near[1]}+{rel - near[0]:#x})" if near else ""
            return f"{name}+{rel:#x}{sym}"
    return f"{addr:#x} (not mapped)"


def jump_target(code, at):
    if code[:2] == b"\x49\xbb" and code[10:13] == b"\x41\xff\xe3":  # movabs r11; jmp r11
        return struct.unpack("<Q", code[2:10])[0]
    if code[0] == 0xE9:                                             # jmp rel32
        return at + 5 + struct.unpack("<i", code[1:5])[0]
    if code[:2] == b"\xff\x25":                                     # jmp *rel32(%rip)
        return None
    return None


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    pid, funcs = int(sys.argv[1]), sys.argv[2:]
    maps = read_maps(pid)
    libc = next((n for _, _, _, n in maps if os.path.basename(n).startswith("libc.so")), None)
    if not libc:
        print(f"pid {pid} maps no libc")
        return 1
    syms = dynsyms(f"/proc/{pid}/root{libc}")
    base = base_of(maps, libc)
    bad = 0
    with open(f"/proc/{pid}/mem", "rb") as mem, open(f"/proc/{pid}/root{libc}", "rb") as disk:
        for fn in funcs:
            if fn not in syms:
                print(f"{fn}: not in libc")
                bad += 1
                continue
            mem.seek(base + syms[fn])
            live = mem.read(16)
            if len(live) < 16:
                print(f"pid {pid} is gone")
                return 1
            disk.seek(syms[fn])
            if live == disk.read(16):
                print(f"{fn}: not hooked")
                bad += 1
                continue
            target = jump_target(live, base + syms[fn])
            where = describe(pid, maps, target) if target is not None else f"rewritten ({live.hex()})"
            print(f"{fn} -> {where}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
