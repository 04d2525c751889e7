#!/usr/bin/env python3
"""What a throttled job's unconfined windows would have cost with the start begun at the
controller's first look and each bounded window ended at the first peek past its bound
(ConfineCheck::begin, window_spent; sixty-sixth session, and a confirmation's unconfined cycles
since the seventy-fifth), replayed from APSHIM_TRACE files taken when they ran whole.

    bench/scripts/trace_windows_replay.py TRACE.csv...   (or folders of them)

A row's cpu_ms is the cycle that ran as the row before it decided (trace_cpu_by_phase.py); the
first row's cycle is taken as the start's first. Each cycle's CPU is taken as even through it.
A start ends at the first 1 ms peek where its CPU beyond one CPU reaches kStartNs (100 ms), a
probe where its CPU beyond its confined CPUs (taken as one: allotment 1) reaches kProbeNs (15
ms), each unconfined cycle of a confirmation (its row before says `cpus` 0) where its own CPU
beyond one CPU reaches its share of the confirmation's bound (CONFIRM_CYCLE_BOUND_MS, 20 ms at 5
ms cycles); the rest of that cycle and the window's later cycles are counted at one CPU instead.
Holds and the rest are left as they ran. An estimate: the controller's wake-ups are taken as on
time, and the job's later progress as unchanged. Per file: wall, CPUs as traced, CPUs with the
start and probes cut (as before the seventy-fifth session), CPUs with the confirmations' cycles
cut too, and CPUs where, besides, no confirmation follows a cut probe whose marks (taken as even
through its cycle) fall below kMinProbeMarks, since such a probe reads "not hand-over bound".
Traces taken before c4a39ac read the process clock at ticks: part of an unconfined cycle's CPU
shows in the next row, which this leaves there."""
import glob
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "support"))
from apshim_test import read_trace  # noqa: E402

BOUND_MS = {"start": 100.0, "probe": 15.0}
CONFIRM_CYCLE_BOUND_MS = 20.0  # kConfirmCycles / kMinBoundedConfirmCycles cycles of 5 ms
MIN_PROBE_MARKS = 8
PEEK_MS = 1.0


def cut_at(cpu, dt, spent_before, bound):
    """Where a window whose cycle used `cpu` ms of CPU over `dt` ms, having spent `spent_before`
    beyond one CPU before it, reaches `bound` at a 1 ms peek: (ms into the cycle or None, CPU ms
    saved by ending it there)."""
    if dt <= 0:
        return None, 0.0
    rate = cpu / dt
    k = PEEK_MS
    while k < dt and spent_before + (rate - 1.0) * k < bound:
        k += PEEK_MS
    if k >= dt:
        return None, 0.0
    return k, (rate - 1.0) * (dt - k)


def replay(path):
    """(wall ms, CPU ms traced, saved by cutting the start and probes, saved by cutting the
    confirmations' cycles too, saved besides by the confirmations that a cut probe could not start)."""
    rows = read_trace(path)
    total = sum(r["cpu_ms"] for r in rows)
    saved = [0.0, 0.0, 0.0]
    prev = {"time_ms": 0.0, "confine_check": "start", "cpus": 0}
    window = None  # [phase, CPU ms beyond one CPU so far, ended]
    skip_confirm = False  # the confirmation now followed a probe cut with too few marks
    for r in rows:
        t, cpu = r["time_ms"], r["cpu_ms"]
        dt, phase = t - prev["time_ms"], prev["confine_check"]
        unconfined = prev["cpus"] == 0
        if phase in BOUND_MS:
            if window is None or window[0] != phase:
                window = [phase, 0.0, False]
            if window[2]:
                for i in range(3):
                    saved[i] += cpu - dt
            else:
                k, less = cut_at(cpu, dt, window[1], BOUND_MS[phase])
                if k is not None:
                    window[2] = True
                    for i in range(3):
                        saved[i] += less
                    if phase == "probe":
                        # It reads hand-over bound only with kMinProbeMarks (its marks taken as even).
                        skip_confirm = r["marks"] * k / dt < MIN_PROBE_MARKS
                window[1] += cpu - dt
        elif phase == "confirm" and unconfined and dt > 0:
            window = None
            k, less = cut_at(cpu, dt, 0.0, CONFIRM_CYCLE_BOUND_MS)
            saved[1] += less
            saved[2] += max(cpu - dt, 0.0) if skip_confirm else less
        else:
            window = None
        if r["confine_check"] not in ("probe", "confirm"):
            skip_confirm = False
        prev = r
    return prev["time_ms"], total, saved


def main(args):
    paths = [p for a in args for p in (sorted(glob.glob(os.path.join(a, "*.csv"))) if os.path.isdir(a) else [a])]
    if not paths:
        sys.exit(__doc__)
    for p in paths:
        wall, total, saved = replay(p)
        if wall > 0:
            print(f"{os.path.basename(p)}: wall {wall:.0f} ms, {total / wall:.3f} CPUs traced, replayed "
                  + ", ".join(f"{(total - s) / wall:.3f} ({s:.0f} CPU-ms less)" for s in saved))


if __name__ == "__main__":
    main(sys.argv[1:])
