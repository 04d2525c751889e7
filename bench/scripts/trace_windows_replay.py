#!/usr/bin/env python3
"""What a throttled job's unconfined windows would have cost with the start begun at the
controller's first look and each bounded window ended at the first peek past its bound
(ConfineCheck::begin, window_spent; sixty-sixth session), replayed from APSHIM_TRACE files taken
when the check stepped once a cycle only.

    bench/scripts/trace_windows_replay.py TRACE.csv...   (or folders of them)

A row's cpu_ms is the cycle that ran as the row before it decided (trace_cpu_by_phase.py); the
first row's cycle is taken as the start's first. Each cycle's CPU is taken as even through it.
A start ends at the first 1 ms peek where its CPU beyond one CPU reaches kStartNs (100 ms), a
probe where its CPU beyond its confined CPUs (taken as one: allotment 1) reaches kProbeNs (15
ms); the rest of that cycle and the window's later cycles are counted at one CPU instead.
Confirmations, holds and the rest are left as they ran. An estimate: the controller's wake-ups
are taken as on time, and the job's later progress as unchanged. Per file: wall, CPUs as traced,
CPUs replayed, CPU ms saved."""
import glob
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "support"))
from apshim_test import read_trace  # noqa: E402

BOUND_MS = {"start": 100.0, "probe": 15.0}
PEEK_MS = 1.0


def replay(path):
    rows = read_trace(path)
    total = sum(r["cpu_ms"] for r in rows)
    saved = 0.0
    prev_t, prev_phase = 0.0, "start"
    window = None  # [phase, began ms, CPU ms so far, ended]
    for r in rows:
        t, cpu = r["time_ms"], r["cpu_ms"]
        dt, phase = t - prev_t, prev_phase
        if phase in BOUND_MS:
            if window is None or window[0] != phase:
                window = [phase, prev_t, 0.0, False]
            if window[3]:
                saved += cpu - dt
            elif dt > 0:
                rate = cpu / dt
                k = PEEK_MS
                while k < dt and window[2] + rate * k - (prev_t + k - window[1]) < BOUND_MS[phase]:
                    k += PEEK_MS
                if k < dt:
                    saved += (rate - 1.0) * (dt - k)
                    window[3] = True
                window[2] += cpu
        else:
            window = None
        prev_t, prev_phase = t, r["confine_check"]
    return prev_t, total, saved


def main(args):
    paths = [p for a in args for p in (sorted(glob.glob(os.path.join(a, "*.csv"))) if os.path.isdir(a) else [a])]
    if not paths:
        sys.exit(__doc__)
    for p in paths:
        wall, total, saved = replay(p)
        if wall > 0:
            print(f"{os.path.basename(p)}: wall {wall:.0f} ms, {total / wall:.3f} CPUs traced, "
                  f"{(total - saved) / wall:.3f} replayed ({saved:.0f} CPU-ms less)")


if __name__ == "__main__":
    main(sys.argv[1:])
