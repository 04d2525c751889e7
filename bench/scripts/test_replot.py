#!/usr/bin/env python3
"""replot.py rewrites a committed results folder's summary.md byte for byte from its raw.csv and
traces (a copy of it, in a temporary folder): omp_pair (plain) and p1_arrival_half (calibrated,
with the T its summary names; without --T it refuses and writes nothing).
Usage: test_replot.py RESULTS_DIR BUILD"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

results, build = sys.argv[1], sys.argv[2]
here = os.path.dirname(os.path.abspath(__file__))
failed = 0


def check(ok, what):
    global failed
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    failed += not ok


with tempfile.TemporaryDirectory(prefix="apshim-replot-") as tmp:
    for name in ("omp_pair", "p1_arrival_half"):
        src = os.path.join(results, name)
        dst = os.path.join(tmp, name)
        shutil.copytree(src, dst)
        want = open(os.path.join(src, "summary.md")).read()
        os.unlink(os.path.join(dst, "summary.md"))
        cmd = [sys.executable, os.path.join(here, "replot.py"), name, dst, "--build", build]
        m = re.search(r"\) = ([0-9.]+) s; arrivals", want)
        if m:
            r = subprocess.run(cmd, capture_output=True, text=True)
            check(r.returncode != 0 and not os.path.exists(os.path.join(dst, "summary.md")),
                  f"{name}: without --T it refuses ({r.stderr.strip()[-120:]})")
            cmd += ["--T", m.group(1)]
        r = subprocess.run(cmd, capture_output=True, text=True)
        got = open(os.path.join(dst, "summary.md")).read() if os.path.exists(os.path.join(dst, "summary.md")) else ""
        check(r.returncode == 0 and got == want, f"{name}: the same summary.md as the run's ({r.stderr.strip()[-200:]})")
sys.exit(1 if failed else 0)
