#!/usr/bin/env python3
"""Side-by-side CPU cost of iomark and fio on the same jobs.

Runs each job with both tools alternately (A B A B ...), reads their JSON,
and reports per tool the median IOPS and the median CPU time per I/O
(usr+sys CPU of the job divided by its I/O count), plus the ratio
iomark/fio. Lower CPU per I/O means the tool, not the device, is less of
what gets measured.

Usage: scripts/vs_fio.py [--rounds N] [--runtime S] [--iomark PATH] [--dir DIR] [--only NAME]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

JOBS = {
    # name: job options (without --name/--runtime/--output-format)
    "null-qd1": ["--ioengine=null", "--rw=randread", "--bs=4k", "--size=1g", "--time_based"],
    "null-qd16": ["--ioengine=null", "--rw=randread", "--bs=4k", "--size=1g", "--iodepth=16", "--time_based"],
    "psync-cached-randread": ["--ioengine=psync", "--rw=randread", "--bs=4k", "--size=64m", "--time_based", "--invalidate=0"],
    "libaio-direct-randread-qd16": ["--ioengine=libaio", "--direct=1", "--rw=randread", "--bs=4k", "--size=64m", "--iodepth=16", "--time_based"],
    "io_uring-direct-randread-qd16": ["--ioengine=io_uring", "--direct=1", "--rw=randread", "--bs=4k", "--size=64m", "--iodepth=16", "--time_based"],
}


def run(tool, args, cwd):
    out = subprocess.run([tool] + args + ["--output-format=json"], cwd=cwd, capture_output=True, text=True)
    if out.returncode != 0:
        return None, out.stderr.strip().splitlines()[-1:] or ["failed"]
    text = out.stdout[out.stdout.find("{"):]
    job = json.loads(text)["jobs"][0]
    ios = sum(job[d]["total_ios"] for d in ("read", "write", "trim"))
    runtime_s = job["job_runtime"] / 1000.0
    cpu_s = (job["usr_cpu"] + job["sys_cpu"]) / 100.0 * runtime_s
    iops = sum(job[d]["iops"] for d in ("read", "write", "trim"))
    return {"iops": iops, "cpu_ns_per_io": cpu_s * 1e9 / max(ios, 1)}, None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runtime", default="3")
    ap.add_argument("--iomark", default=os.path.join(os.path.dirname(__file__), "..", "target", "release", "iomark"))
    ap.add_argument("--dir", default=None, help="directory for test files (a real filesystem for direct=1)")
    ap.add_argument("--only", default=None)
    a = ap.parse_args()
    workdir = a.dir or tempfile.mkdtemp(prefix="iomark-vs-fio-", dir=os.getcwd())
    print(f"# {a.rounds} rounds, runtime {a.runtime}s, files in {workdir}")
    print(f"{'job':32} {'iomark IOPS':>12} {'fio IOPS':>12} {'iomark ns/io':>13} {'fio ns/io':>10} {'cpu ratio':>9}")
    for name, opts in JOBS.items():
        # An exact job name selects that job alone; otherwise a substring.
        if a.only and (a.only != name if a.only in JOBS else a.only not in name):
            continue
        args = ["--name=" + name, "--runtime=" + a.runtime] + opts
        res = {"iomark": [], "fio": []}
        err = None
        for _ in range(a.rounds):
            for tool, exe in (("iomark", a.iomark), ("fio", "fio")):
                r, e = run(exe, args, workdir)
                if r is None:
                    err = f"{tool}: {e[0]}"
                    break
                res[tool].append(r)
            if err:
                break
        for f in os.listdir(workdir):
            if f.startswith(name):
                os.remove(os.path.join(workdir, f))
        if err:
            print(f"{name:32} skipped ({err})")
            continue
        med = {t: {k: statistics.median(r[k] for r in res[t]) for k in ("iops", "cpu_ns_per_io")} for t in res}
        ratio = med["iomark"]["cpu_ns_per_io"] / med["fio"]["cpu_ns_per_io"]
        print(f"{name:32} {med['iomark']['iops']:12.0f} {med['fio']['iops']:12.0f} "
              f"{med['iomark']['cpu_ns_per_io']:13.1f} {med['fio']['cpu_ns_per_io']:10.1f} {ratio:9.2f}")
    if not a.dir:
        try:
            os.rmdir(workdir)
        except OSError:
            pass


if __name__ == "__main__":
    sys.exit(main())
