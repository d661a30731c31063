#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""`make layers-check`: the layering of userspace/ holds, and nothing is circular.

Usage: check-layers.py MAKE BUILD OBJECTS... -- LAYER=USES...
(the Makefile passes its USES_<layer> lists; docs/ARCHITECTURE.md says why).

1. Wrong-way includes do not compile. For each layer and each layer it may
   not use, a probe file is placed in the lower layer's folder
   (userspace/LOW/layers_probe_LOW.c, removed again) including one header of
   the upper layer, and its object is built by make's own rule, with the
   include paths every object of that folder gets: the build must fail on
   that header. The same probe including every header of its own folder
   must build (the control: a failure above is the include's, not the
   probe's; a header of the folder reaching above it fails here).
   A folder's internal/ headers (engine/internal: the tracker's and the
   sessions' structures) are its own: the control includes them too, and a
   probe in each folder that may use it, including any of them, must fail.
2. No include outside the paths: no "../" or "dir/x.h" in a quoted include.
3. No #include cycle between files, and none between modules once linked:
   module A uses module B when A's object calls or reads what B's defines
   (nm). A file with no header of its own whose exports are all declared
   in one header is a part of that header's module (slurm_listpids.c of
   discovery.h); a header that declares what another module defines
   (load_specs in daemon.h, defined in main.c) makes a cycle here.
"""
import collections
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
failures = []


def fail(msg):
    failures.append(msg)
    print("layers-check: FAIL: " + msg)


def headers(layer):
    return sorted(os.path.basename(h) for h in glob.glob(os.path.join(ROOT, "userspace", layer, "*.h")))


def internal_headers(layer):
    return sorted(os.path.basename(h) for h in
                  glob.glob(os.path.join(ROOT, "userspace", layer, "internal", "*.h")))


def build_probe(make, build, low, includes):
    """Build a probe in userspace/LOW/ including these headers: (ok, compiler output)."""
    name = "layers_probe_%s" % low
    src = os.path.join(ROOT, "userspace", low, name + ".c")
    if os.path.exists(src):
        sys.exit("layers-check: %s exists already (another check running?)" % src)
    try:
        with open(src, "w") as f:
            f.write("/* make layers-check: removed when checked */\n")
            f.writelines('#include "%s"\n' % h for h in includes)
        obj = os.path.join(build, name + ".o")
        if os.path.exists(obj):
            os.unlink(obj)
        r = subprocess.run([make, "--no-print-directory", "-s", "BUILD=" + build, obj],
                           cwd=ROOT, capture_output=True, text=True)
        return r.returncode == 0, r.stdout + r.stderr
    finally:
        os.unlink(src)


def check_probes(make, build, uses):
    for low in uses:
        own = headers(low) + internal_headers(low)
        ok, out = build_probe(make, build, low, own)
        if not ok:
            fail("%s: a probe including its own headers does not build:\n%s" % (low, out))
            continue
        print("layers-check: %s: its own %d header%s with its include paths: built" %
              (low, len(own), "" if len(own) == 1 else "s"))
        for up in uses:
            if up in uses[low]:
                continue
            hdr = headers(up)[0]
            ok, out = build_probe(make, build, low, [hdr])
            if ok:
                fail("%s includes %s's %s, and it compiled" % (low, up, hdr))
            elif not re.search(r"%s: No such file or directory" % re.escape(hdr), out):
                fail("%s including %s's %s failed, but not on the include:\n%s" % (low, up, hdr, out))
            else:
                print("layers-check: %s may not use %s: including %s fails, as it should" % (low, up, hdr))
        for user in uses:
            if user == low or low not in uses[user] or not internal_headers(low):
                continue
            for hdr in internal_headers(low):
                ok, out = build_probe(make, build, user, [hdr])
                if ok:
                    fail("%s includes %s's internal %s, and it compiled" % (user, low, hdr))
                elif not re.search(r"%s: No such file or directory" % re.escape(hdr), out):
                    fail("%s including %s's internal %s failed, but not on the include:\n%s" %
                         (user, low, hdr, out))
                else:
                    print("layers-check: %s may use %s, not its insides: including %s fails, as it should" %
                          (user, low, hdr))


def scc(graph):
    """Tarjan: the strongly connected components of more than one node (or a self-loop)."""
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in graph.get(v, ()):
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def check_include_graph():
    files = sorted(glob.glob(os.path.join(ROOT, "userspace", "*", "*.[ch]")) +
                   glob.glob(os.path.join(ROOT, "userspace", "*", "internal", "*.h")) +
                   glob.glob(os.path.join(ROOT, "bpf", "*.[ch]")))
    by_name = collections.defaultdict(list)
    for f in files:
        by_name[os.path.basename(f)].append(f)
    graph = {}
    for f in files:
        rel = os.path.relpath(f, ROOT)
        graph[rel] = set()
        for inc in INCLUDE.findall(open(f, errors="replace").read()):
            if "/" in inc:
                fail("%s: #include \"%s\": by name only, the include paths say where" % (rel, inc))
                continue
            here = os.path.join(os.path.dirname(f), inc)
            target = here if os.path.exists(here) else (by_name[inc][0] if by_name[inc] else None)
            if target:
                graph[rel].add(os.path.relpath(target, ROOT))
    for dup in (n for n, fs in by_name.items() if len(fs) > 1 and n.endswith(".h")):
        fail("two headers named %s: %s" % (dup, ", ".join(by_name[dup])))
    cycles = scc(graph)
    for c in cycles:
        fail("#include cycle between files: " + " <-> ".join(c))
    if not cycles:
        print("layers-check: no #include cycle between %d files" % len(files))


def check_link_graph(objects):
    hdr_text = {}
    for h in (glob.glob(os.path.join(ROOT, "userspace", "*", "*.h")) +
              glob.glob(os.path.join(ROOT, "userspace", "*", "internal", "*.h"))):
        hdr_text[os.path.basename(h)[:-2]] = open(h, errors="replace").read()
    defines, uses = {}, {}
    for o in objects:
        obj = os.path.basename(o)[:-2]
        uses[obj] = set()
        nm = subprocess.run(["nm", o], capture_output=True, text=True, check=True).stdout
        for line in nm.splitlines():
            p = line.split()
            if len(p) == 3 and p[1] in "TDBRCG":
                defines[p[2]] = obj
            elif len(p) == 2 and p[0] == "U":
                uses[obj].add(p[1])

    def declared_in(sym):
        pat = re.compile(r"\b%s\s*[(\[;]" % re.escape(sym))
        return sorted(h for h, t in hdr_text.items() if pat.search(t))

    module = {}
    for obj in uses:
        if obj in hdr_text:
            module[obj] = obj
            continue
        homes = set()
        for sym, where in defines.items():
            if where == obj:
                d = declared_in(sym)
                homes.add(d[0] if len(d) == 1 else None)
        module[obj] = homes.pop() if len(homes) == 1 and None not in homes else obj
    graph = collections.defaultdict(set)
    for obj, syms in uses.items():
        for sym in syms:
            if sym in defines and module[defines[sym]] != module[obj]:
                graph[module[obj]].add(module[defines[sym]])
    cycles = scc(graph)
    for c in cycles:
        why = []
        for a in c:
            for b in sorted(graph[a] & set(c)):
                syms = sorted(s for o, ss in uses.items() if module[o] == a for s in ss
                              if s in defines and module[defines[s]] == b)
                why.append("%s uses %s's %s" % (a, b, ", ".join(syms[:3])))
        fail("modules that use each other: %s (%s)" % (" <-> ".join(c), "; ".join(why)))
    if not cycles:
        print("layers-check: no cycle between the %d modules of %d objects" %
              (len(set(module.values())), len(objects)))


def main():
    args = sys.argv[1:]
    if "--" not in args or len(args) < 3:
        sys.exit(__doc__)
    sep = args.index("--")
    make, build, objects = args[0], args[1], args[2:sep]
    uses = {}
    for spec in args[sep + 1:]:
        layer, _, may = spec.partition("=")
        uses[layer] = may.split()
    check_probes(make, build, uses)
    check_include_graph()
    check_link_graph(objects)
    if failures:
        print("layers-check: %d failure%s" % (len(failures), "" if len(failures) == 1 else "s"))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
