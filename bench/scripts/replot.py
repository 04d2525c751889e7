#!/usr/bin/env python3
"""Rewrites a results folder's summary.md and plots from its raw.csv and trace files, without
running anything: for a run made by a Python that had no matplotlib (run.py then writes no plots),
or after a change to the summary's format.

    bench/scripts/replot.py SCENARIO OUT_DIR [--build DIR] [--P N]

SCENARIO and the options must be the ones the run used (they name the jobs and configurations).
A scenario that calibrates its arrivals (P1 at T/2) needs --T, the T its run printed in summary.md
(it is not in raw.csv). The per-repetition columns read every repetition's traces: run.py keeps
them only with --keep-traces (bench.replot's fixture, 2026-11-24e-yield-dev2core, has them all);
without them those columns come from the repetitions whose traces are there."""
import argparse
import csv
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import run  # noqa: E402  (bench/run.py)
import scenarios  # noqa: E402

INTS = ("rep", "exit")
FLOATS = ("arrival_s", "start_s", "end_s", "response_s", "time_s")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scenario", choices=sorted(scenarios.ALL))
    ap.add_argument("out_dir")
    ap.add_argument("--build", default=os.path.join(HERE, "..", "..", "build"))
    ap.add_argument("--P", type=int, default=None)
    ap.add_argument("--T", type=float, default=None, help="the calibrated T of the run (seconds)")
    args = ap.parse_args()
    sc = scenarios.ALL[args.scenario](build=os.path.abspath(args.build), P=args.P or os.cpu_count(), quick=False)
    if sc.calibrate:
        if args.T is None:
            ap.error(f"{sc.name} calibrates its arrivals: give the run's T (--T, from its summary.md)")
        sc.calibrated_T = args.T
        for j in sc.jobs:
            if j.arrival_frac is not None:
                j.arrival_s = j.arrival_frac * sc.calibrated_T
    with open(os.path.join(args.out_dir, "raw.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        for k in INTS:
            r[k] = int(r[k])
        for k in FLOATS:
            r[k] = float(r[k]) if r[k] not in ("", "None") else None
    sc.reps = 1 + max(r["rep"] for r in rows)
    sc.configs = list(dict.fromkeys(r["config"] for r in rows))
    stats, text = run.summarize(sc, rows, args.out_dir)
    run.plot(sc, stats, args.out_dir)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
