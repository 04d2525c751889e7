#!/usr/bin/env python3
"""Cost of one desire update + DP in the GAT at J = 1, 8, 64 jobs (issue: GAT benchmark).
Runs build/bench/gat_bench, keeps the raw CSV, writes a markdown table with medians and
min-max next to the machine description.
    bench/scripts/gat_cost.py [BUILD_DIR] [OUT_DIR]"""
import csv
import io
import os
import statistics
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "..", "build")
out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, "..", "results", "latest")
os.makedirs(out, exist_ok=True)
raw = subprocess.run([os.path.join(build, "bench", "gat_bench")], capture_output=True, text=True, check=True).stdout
with open(os.path.join(out, "gat_update.csv"), "w") as f:
    f.write(raw)
machine = subprocess.run([os.path.join(here, "machine.sh")], capture_output=True, text=True).stdout
with open(os.path.join(out, "machine.txt"), "w") as f:
    f.write(machine)
rows = list(csv.DictReader(io.StringIO(raw)))
by_jobs = {}
for r in rows:
    by_jobs.setdefault(int(r["jobs"]), []).append(float(r["ns_per_update"]))
P = rows[0]["P"]
lines = ["# GAT: cost of one desire update + DP", "", "```", machine.strip(), "```", "",
         f"Each batch times 2000 `Table::update()` calls alternating desire 1 and P={P} (so DP really moves",
         "processors every time), with J-1 other live jobs in the table; the full /proc liveness scan that",
         "runs once per est_cycle is included, amortised. Per-update cost in microseconds:", "",
         "| jobs J | median | min | max | batches | share of one core per job at est_cycle 5 ms |",
         "|---:|---:|---:|---:|---:|---:|"]
for J in sorted(by_jobs):
    v = by_jobs[J]
    med = statistics.median(v)
    lines.append(f"| {J} | {med / 1000:.2f} | {min(v) / 1000:.2f} | {max(v) / 1000:.2f} | {len(v)} | {med / 5e6 * 100:.3f}% |")
lines += ["", "Raw data: `gat_update.csv`."]
with open(os.path.join(out, "gat_update.md"), "w") as f:
    f.write("\n".join(lines) + "\n")
print("\n".join(lines))
