#!/usr/bin/env python3
"""CPU time by confinement-check phase in APSHIM_TRACE files: where a throttled job's CPU went.

    bench/scripts/trace_cpu_by_phase.py TRACE.csv...   (or folders of them: tests/peer/compare.py
                                                        --keep-traces, device_run.sh's traces-*/)

A trace row's cpu_ms is the cycle that just ended, which ran as the row before it decided (its
confine_check column): a probe's row holds the confined cycle before it, and the row after holds
the probe's own CPU. So each row's CPU is counted under the previous row's phase; the first
row's under "first" (the job's first cycle, which runs unconfined: before the sixty-sixth
session ahead of the start, since then the start's first cycle where the job starts at its first
look, ConfineCheck::begin).
Per file: wall, CPUs overall, and per phase cycles / wall ms / CPU ms (CPUs)."""
import collections
import csv
import glob
import os
import sys


def by_phase(path):
    with open(path) as f:
        rows = list(csv.DictReader(f))
    phases = collections.OrderedDict()
    prev_t, prev_phase, cpu = 0.0, "first", 0.0
    for r in rows:
        t, c = float(r["time_ms"]), float(r["cpu_ms"])
        n, wall, used = phases.get(prev_phase, (0, 0.0, 0.0))
        phases[prev_phase] = (n + 1, wall + t - prev_t, used + c)
        prev_t, prev_phase, cpu = t, r["confine_check"], cpu + c
    return prev_t, cpu, phases


def main(args):
    if not args:
        sys.exit(__doc__)
    files = []
    for a in args:
        files += sorted(glob.glob(os.path.join(a, "*.csv"))) if os.path.isdir(a) else [a]
    for path in files:
        wall, cpu, phases = by_phase(path)
        if wall <= 0:
            continue
        parts = " ".join(f"{k} {n}c/{w:.0f}ms/{c:.0f}cpu-ms({c / w if w else 0:.2f})" for k, (n, w, c) in phases.items())
        print(f"{os.path.basename(path)}: wall {wall:.0f} ms, {cpu / wall:.2f} CPUs | {parts}")


if __name__ == "__main__":
    main(sys.argv[1:])
