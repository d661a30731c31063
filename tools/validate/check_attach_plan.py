#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Self-check of attach_plan.py (run.sh's late attach) on made-up runs: exit
0 when it sizes, waits and judges as run.sh relies on, 1 otherwise. No
root, no tool: `make validate-check`.

size: a launch run of 2 ranks up at 10.0 s, holding 90% of their peak
0.4 s later, gone at 16.0 s, whose application gave 5.0 s for its 30 steps
(so 1.0 s of the run is outside the steps): with a 0.7 s delay, a 5 s
attach and a 2 s margin the job must run 0.4 + 0.7 + 5 + 2 x 2 = 10.1 s
after ranks up, 9.1 s of it in steps of 1/6 s: 55 steps; a launch run
already long enough (no delay, attach nor margin) keeps its steps;
--fixed gives no steps.
held: waits until the ranks' sum reaches the target, or gives up.
check: the ranks outlived the tool's tracing line by 1.5 s (short of a
2 s margin: exit 3) or 2.5 s (exit 0); a tool that never traced is a
lower bound and short; the ranks' memory at the tool's start as a share
of their peak.
Mutations of attach_plan.py checked to fail it: size without the part
outside the steps, with the margin counted once, without the floor at the
given steps; check with the tool's start in place of its tracing line.
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PLAN = os.path.join(HERE, "attach_plan.py")
failures = []


def run(*args):
    p = subprocess.run([sys.executable, PLAN, *args], capture_output=True, text=True)
    out = dict(line.split("=", 1) for line in p.stdout.splitlines() if "=" in line)
    return p.returncode, out


def expect(what, got, want):
    if got != want:
        failures.append(f"{what}: {got!r}, not {want!r}")


def status_csv(path, rows):
    """rows: (mono_s, [VmRSS KiB of each rank])."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write("mono_s,rank,pid,vmrss_kb,vmhwm_kb\n")
        for t, kbs in rows:
            for r, kb in enumerate(kbs):
                f.write(f"{t:.6f},{r},{100 + r},{kb},{kb}\n")


def main():
    tmp = tempfile.mkdtemp(prefix="check_attach_plan.")
    launch = os.path.join(tmp, "launch")
    # One rank before the other (no full sample), then 2 ranks filling up to 1000 KiB each.
    rows = [(9.9, [100])]
    rows += [(10.0 + i / 10, [min(1000, 100 + 200 * i)] * 2) for i in range(61)]
    status_csv(os.path.join(launch, "sampler", "status.csv"), rows)
    common = ["--np", "2", "--delay", "0.7", "--est", "5", "--margin", "2"]
    rc, out = run("size", "--run", launch, "--steps", "30", "--app-time", "5.0", *common)
    expect("size: exit status", rc, 0)
    expect("size: steps", out.get("steps"), "55")
    expect("size: ready_kb (90% of the peak sum)", out.get("ready_kb"), "1800")
    rc, out = run("size", "--run", launch, "--steps", "30", "--app-time", "5.0", "--np", "2",
                  "--delay", "0", "--est", "0", "--margin", "0")
    expect("size: a run long enough keeps its steps", out.get("steps"), "30")
    rc, out = run("size", "--run", launch, "--fixed", *common)
    expect("size --fixed: steps", out.get("steps"), "0")
    expect("size --fixed: ready_kb", out.get("ready_kb"), "1800")

    rc, out = run("held", "--status", os.path.join(launch, "sampler", "status.csv"), "--np", "2",
                  "--kb", "1800", "--timeout", "5", "--pid", str(os.getpid()))
    expect("held: reached", out.get("held_ok"), "1")
    rc, out = run("held", "--status", os.path.join(launch, "sampler", "status.csv"), "--np", "2",
                  "--kb", "2001", "--timeout", "0.3", "--pid", str(os.getpid()))
    expect("held: never reached", out.get("held_ok"), "0")

    for last, want_rc, want_out in ((26.5, 3, "1.50"), (27.5, 0, "2.50")):
        att = os.path.join(tmp, f"attach-{last}")
        # 2 ranks at 500 KiB each until 21.0 s, then 1000 KiB each until `last`.
        status_csv(os.path.join(att, "sampler", "status.csv"),
                   [(18.0 + i / 10, [500 if 18.0 + i / 10 < 21.0 else 1000] * 2)
                    for i in range(int(round((last - 18.0) * 10)) + 1)])
        with open(os.path.join(att, "meta.txt"), "w") as f:
            f.write("np=2\ntool_start_mono_s=20.0\nattach_mono_s=25.0\n")
        rc, out = run("check", "--run", att, "--margin", "2")
        expect(f"check (ranks gone at {last}): exit status", rc, want_rc)
        expect(f"check (ranks gone at {last}): outlived", out.get("attach_outlived_s"), want_out)
        expect(f"check (ranks gone at {last}): attach_tool_s", out.get("attach_tool_s"), "5.00")
        expect(f"check (ranks gone at {last}): held", out.get("held_at_attach_pct"), "50")
    with open(os.path.join(att, "meta.txt"), "w") as f:
        f.write("np=2\ntool_start_mono_s=20.0\n")
    rc, out = run("check", "--run", att, "--margin", "2")
    expect("check (never traced): exit status", rc, 3)
    expect("check (never traced): lower bound", (out.get("attach_tool_s"), out.get("attach_tool_lower")),
           ("7.50", "1"))
    for f in failures:
        print(f"check_attach_plan: FAIL: {f}", file=sys.stderr)
    if not failures:
        print("check_attach_plan: sizing, waiting and judging as run.sh relies on")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
