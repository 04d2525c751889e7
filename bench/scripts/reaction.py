#!/usr/bin/env python3
"""Reaction time: from an allotment change to the change in where the job's threads may run;
with --lend, from a job's going quiet to its lending, and from its next loop to asking back.

    bench/scripts/reaction.py BUILD_DIR [--reps 10] [--est-cycle-ms 5] [--out DIR] [--lend]

A busy OpenMP job (tests/omp/omp_contract_gcc: one long region of static loops, two threads)
runs under the shim in a table of P = 2 beside a stand-in co-runner (tests/programs/gat_job)
that wants both processors, so the job runs confined to one CPU. Then, each repetition, after a
random pause (so that changes fall at random phases of the job's cycle):
  release  the co-runner exits; measured: time until every thread of the job may run on both CPUs
           (Cpus_allowed_list in /proc, polled every 0.5 ms);
  take     a new co-runner joins wanting both processors; measured: time until the job's
           OpenMP threads are confined to one CPU again.
Both include the co-runner's start or exit, the job's wait for its next est_cycle (each job acts
on the table at its own cycle), the estimator's step and the sched_setaffinity calls. A first
version measured CPU use over a sliding window instead and read releases at 50 ms cycles as
5-19 ms, which the masks do not confirm (25 ms median: half a cycle, as expected); that version's
readings were not explained and are not used. Writes DIR/raw.csv and prints medians. A timing:
idle machine.

--lend (APSHIM_LEND_MS, shim/controller.cpp): in a table of P = 4 beside a stand-in co-runner
wanting all 4 (so the job holds 2 and the co-runner wants more), tests/omp/omp_rounds_gcc runs
rounds of a parallel loop, each followed by a serial phase of 100 ms of wall time; its stderr
line after each loop gives the serial phase's start (the program's CLOCK_MONOTONIC), and
bench/gat_watch reports each change of the job's row (polled every 0.2 ms). Per round:
  quiet_ms  serial phase start -> the job's desire reads 1 (lending, or WSAP's cycles without it);
  back_ms   serial phase end (its start + 100 ms; the program spins on the wall clock) -> the
            job's desire reads P again (after it read 1). Both include gat_watch's 0.2 ms poll.
Each repetition runs the job with APSHIM_LEND_MS=1 and with 0 (the cycles alone), interleaved.
On 2 cores P = 4 is virtual: this times the table, not CPU masks. Writes DIR/lend.csv.
"""
import argparse
import csv
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

def job_cpus(pid):
    """The largest CPU count any of the job's OpenMP threads may run on (the controller thread,
    never confined, is left out), or None once the job is gone."""
    most = 0
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                st = f.read()
        except OSError:
            continue
        if "Name:\tapshim-ctl" in st:
            continue
        for line in st.splitlines():
            if line.startswith("Cpus_allowed_list:"):
                n = 0
                for part in line.split()[1].split(","):
                    a, _, b = part.partition("-")
                    n += int(b or a) - int(a) + 1
                most = max(most, n)
    return most


def wait_cpus(pid, start, pred, limit=2.0):
    """Seconds from `start` until pred(job_cpus) holds, or None."""
    while time.monotonic() - start < limit:
        n = job_cpus(pid)
        if n is None:
            return None
        if pred(n):
            return time.monotonic() - start
        time.sleep(0.0005)
    return None


SERIAL_MS, ROUNDS, LEND_P = 100, 8, 4


def lend_run(build, env, lend_ms):
    """One run of omp_rounds under the shim: [(round start of serial phase, [(t, desire, allotment)])]."""
    prog = os.path.join(build, "tests", "omp", "omp_rounds_gcc")
    job_env = dict(env, LD_PRELOAD=os.path.join(build, "shim", "libapshim.so"), APSHIM_LEND_MS=str(lend_ms))
    job = subprocess.Popen([prog, str(ROUNDS), "200", "1000", str(SERIAL_MS)], env=job_env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    watch = subprocess.Popen([os.path.join(build, "bench", "gat_watch"), str(job.pid), "60"], env=env,
                             stdout=subprocess.PIPE, text=True)
    marks = []
    for line in job.stderr:  # "round k threads n at T" right after each loop, T: CLOCK_MONOTONIC
        if line.startswith("round "):
            marks.append(float(line.split()[-1]))
    job.wait()
    rows = [tuple(float(x) for x in line.split(",")) for line in watch.communicate(timeout=70)[0].splitlines()[1:]]
    return marks, rows


def first(rows, after, pred):
    return next((t for t, d, a in rows if t >= after and pred(d)), None)


def lend_main(args, build):
    gat_job = os.path.join(build, "tests", "programs", "gat_job")
    tmp = tempfile.mkdtemp(prefix="apshim-lend-")
    env = {k: v for k, v in os.environ.items() if not k.startswith("APSHIM_")}
    env.update(APSHIM_GAT=os.path.join(tmp, "gat"), APSHIM_P=str(LEND_P), APSHIM_EST_CYCLE_MS=str(args.est_cycle_ms))
    corunner = subprocess.Popen([gat_job, str(LEND_P), "600000"], env=env, stdout=subprocess.DEVNULL)
    time.sleep(0.3)
    out = []
    try:
        for rep in range(args.reps):
            for lend_ms in (1, 0):
                marks, rows = lend_run(build, env, lend_ms)
                # The last serial phase ends with the job. Round 0 is left out: with APSHIM_P above
                # the CPUs the hooks are timed from the start, and a worker already inside the first
                # region's loop when timing starts is not measured until that region ends, so the
                # job enters its first serial phase at desire 2 (what one busy thread asks), not P.
                for k, m in list(enumerate(marks[:-1]))[1:]:
                    end = m + SERIAL_MS / 1000
                    q = first(rows, m, lambda d: d == 1)
                    b = first(rows, q if q is not None else m, lambda d: d == LEND_P)
                    out.append({"rep": rep, "lend_ms": lend_ms, "round": k,
                                "quiet_ms": None if q is None or q > end else round((q - m) * 1000, 2),
                                "back_ms": None if b is None else round((b - end) * 1000, 2)})
                print(f"rep {rep} APSHIM_LEND_MS={lend_ms}: " + " ".join(f"{r['quiet_ms']}/{r['back_ms']}"
                                                                      for r in out if r["rep"] == rep and r["lend_ms"] == lend_ms),
                      flush=True)
    finally:
        corunner.kill()
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "lend.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=["rep", "lend_ms", "round", "quiet_ms", "back_ms"])
            w.writeheader()
            w.writerows(out)
    for lend_ms in (1, 0):
        for key in ("quiet_ms", "back_ms"):
            rows = [r for r in out if r["lend_ms"] == lend_ms]
            vals = [r[key] for r in rows if r[key] is not None]
            if vals:
                print(f"APSHIM_LEND_MS={lend_ms} {key}: median {statistics.median(vals):.2f} [{min(vals):.2f}-{max(vals):.2f}] "
                      f"over {len(vals)} of {len(rows)} rounds (est_cycle {args.est_cycle_ms} ms)")
            else:
                print(f"APSHIM_LEND_MS={lend_ms} {key}: never within the phase ({len(rows)} rounds)")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--est-cycle-ms", type=float, default=5.0)
    ap.add_argument("--out", default=None)
    ap.add_argument("--lend", action="store_true")
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    if args.lend:
        return lend_main(args, build)
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
            time.sleep(random.uniform(0.1, 0.3))
            if wait_cpus(job.pid, time.monotonic(), lambda n: n == 1) is None:
                print("the job did not settle at one CPU: no measurement", file=sys.stderr)
                break
            start = time.monotonic()
            corunner.terminate()
            corunner.wait()
            release = wait_cpus(job.pid, start, lambda n: n >= 2)
            # Random pauses: a fixed one puts every change at the same phase of the job's cycle
            # (at 50 ms cycles every release then came 5-17 ms after the change, never later).
            time.sleep(random.uniform(0.15, 0.35))
            start = time.monotonic()
            corunner = subprocess.Popen([gat_job, "2", "600000"], env=env, stdout=subprocess.DEVNULL)
            take = wait_cpus(job.pid, start, lambda n: n == 1)
            rows.append({"rep": rep, "release_ms": None if release is None else round(release * 1000, 2),
                         "take_ms": None if take is None else round(take * 1000, 2)})
            print(f"rep {rep}: release {rows[-1]['release_ms']} ms, take {rows[-1]['take_ms']} ms", flush=True)
            time.sleep(random.uniform(0.15, 0.35))
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
