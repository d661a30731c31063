#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Check a Grafana dashboard of memattr-bpf: valid JSON, the templated job
and user variables, every variable an expression uses defined, every metric
one the node service serves (or a recording rule of memattr-rules.yml), and
every PromQL expression (panels' and variables' label_values selectors)
parsed by `promtool check rules`, with the variables substituted. With
RULES, every metric the rules file names is one the service serves too.
The list of served families is checked against userspace/output/metrics*.c.

Usage: check-dashboard.py DASHBOARD.json [RULES.yml]   (exit 1 on a problem)
"""
import json
import os
import re
import subprocess
import sys
import tempfile

# The families the daemon serves (userspace/output/metrics_render.c), and `up`.
METRICS = {
    "memattr_rank_resident_bytes", "memattr_rank_proportional_bytes",
    "memattr_rank_peak_resident_bytes", "memattr_job_ranks_folded",
    "memattr_job_info", "memattr_job_resident_bytes", "memattr_job_proportional_bytes",
    "memattr_job_rank_peak_resident_bytes",
    "memattr_events_total", "memattr_events_dropped_total",
    "memattr_unwind_failures_total", "memattr_execs_examined_total",
    "memattr_execs_skipped_total", "memattr_execs_undecided_total",
    "memattr_jobs", "memattr_processes", "memattr_refused_total",
    "memattr_bpf_map_entries", "memattr_bpf_map_max_entries",
    "memattr_daemon_resident_bytes", "memattr_daemon_cpu_seconds_total",
    "memattr_build_info", "memattr_oom_kills_total", "up",
}
# Grafana's own variables, as a value PromQL accepts there.
BUILTIN = {"__rate_interval": "5m", "__interval": "1m", "__range": "1h"}
REQUIRED_VARS = {"job", "user", "uid"}


def fail(problems):
    for p in problems:
        print("check-dashboard: " + p, file=sys.stderr)
    sys.exit(1)


def walk_panels(panels):
    for p in panels:
        yield p
        yield from walk_panels(p.get("panels", []))


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    path = sys.argv[1]
    rules = sys.argv[2] if len(sys.argv) == 3 else None
    with open(path) as f:
        dash = json.load(f)
    problems = []
    variables = {v["name"]: v for v in dash.get("templating", {}).get("list", [])}
    for name in sorted(REQUIRED_VARS - variables.keys()):
        problems.append(f"{path}: no templated '{name}' variable")
    for name in REQUIRED_VARS & variables.keys():
        if variables[name].get("type") != "query":
            problems.append(f"{path}: variable '{name}' is not a query variable")

    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                       "userspace", "output", "metrics_render.c")
    with open(src) as f:
        served = f.read()
    for name in sorted(METRICS - {"up"}):
        base = name[:-len("_total")] if name.endswith("_total") else name
        base = base[:-len("_info")] if base.endswith("_info") else base
        if '"' + base not in served:
            problems.append(f"{name}: not in {os.path.normpath(src)} (renamed? update METRICS)")

    recorded = set()
    if rules:
        with open(rules) as f:
            text = f.read()
        recorded = set(re.findall(r"^\s*- record:\s*(\S+)", text, re.M))
        for lineno, line in enumerate(text.splitlines(), 1):
            if line.lstrip().startswith("#"):
                continue
            for name in re.findall(r"\bmemattr_[a-z_]+\b", line):
                if name not in METRICS:
                    problems.append(f"{rules}:{lineno}: {name} is not a metric the node service serves")

    exprs = []  # (where, expr)
    for p in walk_panels(dash.get("panels", [])):
        if p.get("type") == "row":
            continue
        targets = p.get("targets", [])
        if not targets:
            problems.append(f"panel '{p.get('title')}': no query")
        for t in targets:
            if not t.get("expr"):
                problems.append(f"panel '{p.get('title')}' {t.get('refId')}: empty expr")
                continue
            exprs.append((f"panel '{p.get('title')}' {t.get('refId')}", t["expr"]))
    for v in variables.values():
        if v.get("type") != "query":
            continue
        q = v.get("query")
        q = q.get("query", "") if isinstance(q, dict) else (q or "")
        m = re.fullmatch(r"\s*label_values\((.*),\s*([A-Za-z_][A-Za-z0-9_]*)\)\s*", q)
        if not m:
            problems.append(f"variable '{v['name']}': not label_values(SELECTOR, LABEL): {q!r}")
            continue
        exprs.append((f"variable '{v['name']}'", m.group(1)))

    ids = {}
    for p in walk_panels(dash.get("panels", [])):
        if p.get("id") in ids:
            problems.append(f"panel id {p.get('id')} used twice")
        ids[p.get("id")] = True

    substituted = []
    for where, e in exprs:
        for var in re.findall(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)", e):
            if var not in variables and var not in BUILTIN:
                problems.append(f"{where}: ${var} is not a variable of the dashboard")
        for name in re.findall(r"\b(?:memattr_[a-z_]+|memattr:[a-z_:0-9]+|up)\b(?=\s*[{\[)/ ]|$)", e):
            if name not in METRICS and name not in recorded:
                problems.append(f"{where}: {name} is not a metric the node service serves")
        s = e
        for k, val in BUILTIN.items():
            s = s.replace("$" + k, val).replace("${" + k + "}", val)
        s = re.sub(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?", "x", s)
        substituted.append((where, s))
    if problems:
        fail(problems)

    with tempfile.TemporaryDirectory() as d:
        f = os.path.join(d, "dashboard-exprs.yml")
        with open(f, "w") as out:
            out.write("groups:\n  - name: dashboard\n    rules:\n")
            for i, (where, s) in enumerate(substituted):
                out.write(f"      # {where}\n      - record: dashboard_expr_{i}\n")
                out.write(f"        expr: {json.dumps(s)}\n")
        r = subprocess.run(["promtool", "check", "rules", f], capture_output=True, text=True)
        if r.returncode:
            fail([f"promtool check rules of the dashboard's expressions failed:",
                  r.stdout + r.stderr, open(f).read()])
    print(f"check-dashboard: {path}: {len(substituted)} expressions parsed, "
          f"variables {', '.join(sorted(variables))}")


if __name__ == "__main__":
    main()
