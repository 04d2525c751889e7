#!/usr/bin/env python3
"""Reaction time: from an allotment change to the change in the job's executing threads.

    bench/scripts/reaction.py BUILD_DIR [--reps 10] [--est-cycle-ms 5] [--out DIR]

A busy OpenMP job (tests/omp/omp_contract_gcc: one long region of static loops, two threads)
runs under the shim in a table of P = 2 beside a stand-in co-runner (tests/programs/gat_job)
that wants both processors, so the job runs confined to one CPU. Then, each repetition:
  release  the co-runner exits (it leaves the table); measured: time until the job uses more than
           1.5 CPUs (its CPU time from /proc, sampled every 0.5 ms, over a sliding 4 ms window);
  take     a new co-runner joins wanting both processors; measured: time until the job uses
           less than 1.2 CPUs over the window.
The sliding window adds up to about half its length to each figure. Both include the co-runner's
and the job's cycles (each job acts on the table at its own next est_cycle), the estimator's
steps and the kernel's migration. Writes DIR/raw.csv and prints medians. A timing: idle machine.
"""
import argparse
import csv
import os
import statistics
import subprocess
import sys
import tempfile
import time

TICK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid):
    """Process CPU seconds from /proc/PID/schedstat of every thread (ns resolution, not ticks)."""
    total = 0
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                    total += int(f.read().split()[0])
            except OSError:
                pass
    except OSError:
        return None
    return total / 1e9


def wait_rate(pid, start, pred, window=0.004, limit=2.0):
    """Seconds from `start` until pred(CPU rate over the last `window`) holds, or None."""
    samples = []
    while time.monotonic() - start < limit:
        c = cpu_s(pid)
        t = time.monotonic()
        if c is None:
            return None
        samples.append((t, c))
        while len(samples) > 2 and samples[1][0] <= t - window:
            samples.pop(0)
        if len(samples) >= 2 and t - samples[0][0] >= window * 0.9:
            rate = (c - samples[0][1]) / (t - samples[0][0])
            if pred(rate):
                return t - start
        time.sleep(0.0005)
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--est-cycle-ms", type=float, default=5.0)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    prog = os.path.join(build, "tests", "omp", "omp_contract_gcc")
    gat_job = os.path.join(build, "tests", "programs", "gat_job")
    tmp = tempfile.mkdtemp(prefix="apshim-reaction-")
    env = {k: v for k, v in os.environ.items() if not k.startswith("APSHIM_")}
    env.update(APSHIM_GAT=os.path.join(tmp, "gat"), APSHIM_P="2", APSHIM_EST_CYCLE_MS=str(args.est_cycle_ms))
    corunner = subprocess.Popen([gat_job, "2", "600000"], env=env, stdout=subprocess.DEVNULL)
    time.sleep(0.3)
    job_env = dict(env, LD_PRELOAD=os.path.join(build, "shim", "libapshim.so"))
    job = subprocess.Popen([prog, "1000", "400000000"], env=job_env, stdout=subprocess.DEVNULL)
    rows = []
    try:
        time.sleep(1.0)
        for rep in range(args.reps):
            if wait_rate(job.pid, time.monotonic(), lambda r: r < 1.2) is None:
                print("the job did not settle at one CPU: no measurement", file=sys.stderr)
                break
            start = time.monotonic()
            corunner.terminate()
            corunner.wait()
            release = wait_rate(job.pid, start, lambda r: r > 1.5)
            time.sleep(0.2)
            start = time.monotonic()
            corunner = subprocess.Popen([gat_job, "2", "600000"], env=env, stdout=subprocess.DEVNULL)
            take = wait_rate(job.pid, start, lambda r: r < 1.2)
            rows.append({"rep": rep, "release_ms": None if release is None else round(release * 1000, 2),
                         "take_ms": None if take is None else round(take * 1000, 2)})
            print(f"rep {rep}: release {rows[-1]['release_ms']} ms, take {rows[-1]['take_ms']} ms", flush=True)
            time.sleep(0.2)
    finally:
        job.kill()
        corunner.kill()
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "raw.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=["rep", "release_ms", "take_ms"])
            w.writeheader()
            w.writerows(rows)
    for key in ("release_ms", "take_ms"):
        vals = [r[key] for r in rows if r[key] is not None]
        if vals:
            print(f"{key}: median {statistics.median(vals):.1f} [{min(vals):.1f}-{max(vals):.1f}] over {len(vals)} "
                  f"(est_cycle {args.est_cycle_ms} ms; {len(rows) - len(vals)} not seen within 2 s)")


if __name__ == "__main__":
    main()
