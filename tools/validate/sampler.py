#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""The kernel's own view of each rank of a real MPI application, to judge
memattr-bpf by (tools/validate/run.sh starts it beside every run).

    sampler.py --root PID --exe PATH --np N --out DIR [--app-libs FILE]
               [--app-code LIB]...
               [--interval-ms 20] [--smaps-interval-ms 200]

It follows the processes below PID (the tool in launch mode, the launcher
when the tool attaches late) and takes as ranks those whose /proc/PID/exe is
PATH (the application binary): launchers, proxies and the tool itself are
never ranks, whatever their environment says. The rank number comes from
the MPI's own variable (OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK).

Every --interval-ms it reads VmRSS and VmHWM from /proc/PID/status (~12 us a
process); every --smaps-interval-ms it reads /proc/PID/smaps (~0.7 ms for an
MPI rank) and sums Rss per category (see classify()). It writes:
  DIR/status.csv  mono_s,rank,pid,vmrss_kb,vmhwm_kb
  DIR/smaps.csv   mono_s,rank,pid,<category>_kb...     (every smaps read)
  DIR/rank-R.peak-smaps.txt   every mapping of the smaps read with the
                  largest Rss sum (the read nearest the rank's peak), with
                  the category it was given: what the comparison rests on
  DIR/ranks.json  per rank: pid, last VmHWM (the kernel's peak over the
                  process's life), largest VmRSS seen, the peak read's
                  categories and its time
It stops when every rank it found has exited and the root is gone, or on
SIGTERM/SIGINT (then it writes what it has). Times are CLOCK_MONOTONIC.

Why our own classification rather than the tool's specs: this is the
yardstick. It uses only what smaps itself says (paths, adjacency,
permissions) and which libraries the program needs without MPI (--app-libs),
independently of uprobe_specs/. --app-code names a library that holds the
program's own code (LAMMPS's liblammps.so under /usr/bin/lmp): its mappings
and .bss count as the binary's.
"""
import argparse
import json
import os
import re
import signal
import sys
import time

# VmRSS/VmHWM are read the one way the integration tests read them.
import importlib.util  # noqa: E402
_spec = importlib.util.spec_from_file_location("it_sampler", os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "integration", "sampler.py"))
_it_sampler = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_it_sampler)
read_status = _it_sampler.read_status

stop = False

RANK_VARS = ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK")

# Files that are the MPI library or belong to it alone (Open MPI 4.1 and
# MPICH 4.0 as Debian 12 ships them, with what they pull in that a plain
# C/C++/Fortran program does not: PMIx, libevent, hwloc, UCX, libfabric,
# verbs, PSM, munge, libnl, libudev).
MPI_FILE_RES = [re.compile(p) for p in (
    r"/libmpi[^/]*\.so", r"/libmpich[^/]*\.so", r"/libmpicxx[^/]*\.so",
    r"/libmpifort[^/]*\.so", r"/libopen-(rte|pal)\.so", r"/libmca_common_[^/]*\.so",
    r"/libompitrace\.so", r"/liboshmem\.so",
    r"/openmpi/", r"/openmpi3/", r"/mca_[^/]*\.so", r"/pmix[0-9]*/", r"/libpmix\.so",
    r"/pmix_mca_[^/]*\.so", r"/libevent[^/]*\.so", r"/libhwloc\.so",
    r"/libuc[pstm][^/]*\.so", r"/ucx/", r"/libfabric\.so", r"/libfabric/",
    r"/libibverbs\.so", r"/libibverbs/", r"/librdmacm\.so", r"/libpsm[^/]*\.so",
    r"/libmunge\.so", r"/libnl-[^/]*\.so", r"/libudev\.so", r"/libxpmem\.so",
    r"/libltdl\.so",
)]
# MPI's shared-memory transports: Open MPI's vader segments and PMIx files,
# MPICH's shm files, and shared anonymous memory (MAP_SHARED|MAP_ANONYMOUS
# shows as "/dev/zero (deleted)"; these applications do not make any).
MPI_SHM_RES = [re.compile(p) for p in (
    r"^/dev/shm/", r"^/tmp/ompi\.", r"/ompi\.[^/]*/", r"^/dev/zero", r"^/SYSV",
    r"^\[anon_shmem", r"^/memfd:",
)]
LIBC_RE = re.compile(r"/(libc|ld-linux[^/]*|libpthread|libdl|librt|libutil|libanl)[.-][^/]*$")
KERNEL_NAMES = ("[vdso]", "[vvar]", "[vsyscall]", "[vvar_vclock]", "[uprobes]")

CATEGORIES = (
    "exe_file",     # the application binary's own mappings (text, data)
    "exe_bss",      # anonymous mapping right above the binary's data: its .bss
    "heap",         # [heap] (brk)
    "anon",         # other private anonymous memory not owned by a file: mmap'd
                    # malloc blocks, arenas, Fortran/C++ large arrays
    "thread_stack", # anonymous rw mapping right above a PROT_NONE guard page
    "stack",        # [stack]
    "mpi_file",     # MPI's shared objects (file_kind()): code, data, COW'd pages
    "mpi_bss",      # the .bss of those files
    "mpi_shm",      # MPI's shared segments
    "libc_file",    # glibc and the loader (+ their .bss), as the tool's libc
    "other_file",   # every other shared object or mapped file (+ .bss)
    "kernel",       # [vdso] and friends
)


def on_signal(_sig, _frame):
    global stop
    stop = True


def read_smaps(pid):
    """[(start, end, perms, name, rss_kb, anon_kb)] or None."""
    maps = []
    cur = None
    try:
        with open(f"/proc/{pid}/smaps") as f:
            for line in f:
                first = line.split(None, 1)[0]
                if "-" in first and not first.endswith(":"):
                    parts = line.split(None, 5)
                    s, e = first.split("-")
                    name = parts[5].strip() if len(parts) > 5 else ""
                    cur = [int(s, 16), int(e, 16), parts[1], name, 0, 0]
                    maps.append(cur)
                elif first == "Rss:":
                    cur[4] = int(line.split()[1])
                elif first == "Anonymous:":
                    cur[5] = int(line.split()[1])
    except OSError:
        return None
    return maps


APP_LIBS = None     # set of paths, from --app-libs
APP_CODE = set()    # paths, from --app-code: counted as the binary


def is_shared_object(name):
    base = name.rsplit("/", 1)[-1]
    return base.endswith(".so") or ".so." in base


def file_kind(name, exe):
    """The binary, glibc, MPI's, or another file. With --app-libs (the
    libraries the program's own non-MPI dependencies pull in, run.sh reads
    them with ldd), every other shared object is MPI's: the MPI libraries,
    their plugins and whatever those load (hwloc's plugins and theirs, UCX,
    libnuma, ...) - "the libraries it alone pulls in". Without it, a fixed
    list of names decides."""
    if name == exe or name in APP_CODE:
        return "exe"
    if LIBC_RE.search(name):
        return "libc"
    if APP_LIBS is not None:
        if name in APP_LIBS:
            return "other"
        return "mpi" if is_shared_object(name) else "other"
    if any(r.search(name) for r in MPI_FILE_RES):
        return "mpi"
    return "other"


def classify(maps, exe):
    """Each mapping -> a category. A private anonymous mapping that starts
    exactly where a file's writable data mapping ends is that file's .bss
    (how the loader lays it out); one that starts right after a PROT_NONE guard is a thread
    stack (glibc puts the guard below the stack; malloc's arenas keep their
    PROT_NONE reserve above the part in use, so they stay "anon")."""
    out = []
    prev = None
    for m in maps:
        start, end, perms, name, rss, _anon = m
        if name in KERNEL_NAMES:
            cat = "kernel"
        elif name == "[heap]":
            cat = "heap"
        elif name == "[stack]":
            cat = "stack"
        elif any(r.search(name) for r in MPI_SHM_RES) or (perms[3] == "s" and not name.startswith("/")):
            cat = "mpi_shm"
        elif name.startswith("/"):
            k = file_kind(name, exe)
            cat = {"exe": "exe_file", "mpi": "mpi_file", "libc": "libc_file"}.get(k, "other_file")
        else:   # private anonymous ("" or "[anon:...]")
            if prev is not None and prev[1] == start and prev[3].startswith("/") \
                    and prev[2] == "rw-p" and not any(r.search(prev[3]) for r in MPI_SHM_RES):
                k = file_kind(prev[3], exe)
                cat = {"exe": "exe_bss", "mpi": "mpi_bss", "libc": "libc_file"}.get(k, "other_file")
            elif prev is not None and prev[1] == start and prev[2].startswith("---") \
                    and not prev[3] and "rw" in perms:
                cat = "thread_stack"
            else:
                cat = "anon"
        out.append((m, cat))
        prev = m
    return out


def summarize(classified):
    tot = {c: 0 for c in CATEGORIES}
    for m, cat in classified:
        tot[cat] += m[4]
    return tot


def descendants(root):
    out, queue = [], [root]
    while queue:
        p = queue.pop()
        try:
            for t in os.listdir(f"/proc/{p}/task"):
                try:
                    with open(f"/proc/{p}/task/{t}/children") as f:
                        kids = [int(x) for x in f.read().split()]
                except OSError:
                    continue
                out.extend(kids)
                queue.extend(kids)
        except OSError:
            continue
    return out


def rank_of(pid):
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            env = f.read().split(b"\0")
    except OSError:
        return None
    vals = {}
    for kv in env:
        k, _, v = kv.partition(b"=")
        vals[k.decode(errors="replace")] = v.decode(errors="replace")
    for k in RANK_VARS:
        if k in vals and vals[k].isdigit():
            return int(vals[k])
    return None


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", type=int, required=True)
    ap.add_argument("--exe", required=True)
    ap.add_argument("--np", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--interval-ms", type=float, default=20.0)
    ap.add_argument("--smaps-interval-ms", type=float, default=200.0)
    ap.add_argument("--app-libs", help="file: the program's own non-MPI libraries, one path a line")
    ap.add_argument("--app-code", action="append", default=[],
                    help="a library holding the program's own code: counted as the binary")
    a = ap.parse_args()
    APP_CODE.update(os.path.realpath(x) for x in a.app_code)
    if a.app_libs:
        global APP_LIBS
        with open(a.app_libs) as f:
            APP_LIBS = {os.path.realpath(x.strip()) for x in f if x.strip()}
    exe = os.path.realpath(a.exe)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    os.makedirs(a.out, exist_ok=True)
    st_f = open(os.path.join(a.out, "status.csv"), "w")
    st_f.write("mono_s,rank,pid,vmrss_kb,vmhwm_kb\n")
    sm_f = open(os.path.join(a.out, "smaps.csv"), "w")
    sm_f.write("mono_s,rank,pid,rss_sum_kb," + ",".join(c + "_kb" for c in CATEGORIES) + "\n")

    ranks = {}      # pid -> dict
    period = a.interval_ms / 1000.0
    smaps_every = max(1, round(a.smaps_interval_ms / a.interval_ms))
    tick = 0
    nxt = time.monotonic()
    while not stop:
        if len(ranks) < a.np and (tick % 5 == 0):
            for p in descendants(a.root):
                if p in ranks:
                    continue
                try:
                    pexe = os.readlink(f"/proc/{p}/exe")
                except OSError:
                    continue    # not exec'd yet or gone: look again later
                if pexe != exe:
                    # A launcher, or a rank-to-be still between fork and
                    # exec (it runs the launcher's image): look again later.
                    continue
                r = rank_of(p)
                if r is None:
                    continue
                ranks[p] = {"rank": r, "pid": p, "hwm_kb": 0, "max_rss_kb": 0,
                            "peak_sum_kb": -1, "peak": None, "peak_t": None,
                            "first_t": time.monotonic(), "last_t": None}
        now = time.monotonic()
        n_alive = 0
        for p, info in ranks.items():
            st = read_status(p)
            if st is None:
                continue
            n_alive += 1
            info["hwm_kb"] = max(info["hwm_kb"], st[1])
            info["max_rss_kb"] = max(info["max_rss_kb"], st[0])
            info["last_t"] = now
            st_f.write(f"{now:.6f},{info['rank']},{p},{st[0]},{st[1]}\n")
            if tick % smaps_every == 0:
                maps = read_smaps(p)
                if not maps:
                    continue
                cl = classify(maps, exe)
                tot = summarize(cl)
                s = sum(tot.values())
                sm_f.write(f"{now:.6f},{info['rank']},{p},{s}," +
                           ",".join(str(tot[c]) for c in CATEGORIES) + "\n")
                if s > info["peak_sum_kb"]:
                    info["peak_sum_kb"] = s
                    info["peak"] = tot
                    info["peak_t"] = now
                    info["peak_maps"] = cl
        st_f.flush()
        sm_f.flush()
        root_alive = alive(a.root)
        if ranks and n_alive == 0 and (len(ranks) >= a.np or not root_alive):
            break
        if not ranks and not root_alive:
            break
        tick += 1
        nxt += period
        d = nxt - time.monotonic()
        if d > 0:
            time.sleep(d)
        else:
            nxt = time.monotonic()

    res = []
    for p, info in sorted(ranks.items(), key=lambda kv: kv[1]["rank"]):
        cl = info.pop("peak_maps", None)
        if cl:
            with open(os.path.join(a.out, f"rank-{info['rank']}.peak-smaps.txt"), "w") as f:
                f.write(f"# rank {info['rank']} pid {p} smaps read at mono {info['peak_t']:.3f}: "
                        "start-end perms rss_kb anon_kb category name\n")
                for m, cat in cl:
                    if m[4]:
                        f.write(f"{m[0]:x}-{m[1]:x} {m[2]} {m[4]} {m[5]} {cat} {m[3]}\n")
        res.append(info)
    with open(os.path.join(a.out, "ranks.json"), "w") as f:
        json.dump({"exe": exe, "np": a.np, "ranks": res, "categories": CATEGORIES}, f, indent=1)
    if len(ranks) < a.np:
        print(f"sampler: found {len(ranks)} of {a.np} ranks", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
