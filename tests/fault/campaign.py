#!/usr/bin/env python3
"""Fault campaign: many co-running jobs under the shim with a private table while jobs are
killed (SIGKILL / SIGTERM) at random instants and short jobs churn. After every step the table's
invariants are checked, and every job that was not killed must finish with the right answer.

    tests/fault/campaign.py BUILD_DIR [--steps N] [--seed S] [--P N] [--kinds gat,tbb,omp,gomp]
                            [--results FILE]

Invariants (from `apshim status --json`, a snapshot taken under the table lock):
  - every live job holds >= 1 processor; the sum of allotments <= P while jobs <= P;
  - allotments are fair, efficient and conservative (Sen §5.1) with respect to the rows' desires;
  - no row of a dead process survives three est_cycles after its death while a live job runs;
  - no lost rows: every job we started and did not kill, still running, has its row.
Exit status 0 iff there were no invariant violations, no wrong answers and no hangs.
"""
import argparse
import os
import random
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from apshim_test import Shim  # noqa: E402


def kinds_available(build):
    """Job kinds: argv and the stdout line a correct run prints (None: any exit 0)."""
    wl = os.path.join(build, "bench", "workloads")
    gat_job = os.path.join(build, "tests", "programs", "gat_job")
    kinds = {"gat": ([gat_job, "{desire}", "{ms}"], None, False)}
    for key, name in (("tbb", "wl_fib_tbb"), ("omp", "wl_fib_omp_clang"), ("gomp", "wl_fib_omp_gcc")):
        path = os.path.join(wl, name)
        if os.path.exists(path):
            kinds[key] = ([path, "{fib_n}"], "checksum", True)
    return kinds


def fair_efficient_conservative(jobs, P):
    if not jobs:
        return True, ""
    allot = [j["allotment"] for j in jobs]
    desire = [j["desire"] for j in jobs]
    if min(allot) < 1:
        return False, "a job holds no processor"
    if len(jobs) <= P and sum(allot) > P:
        return False, f"sum {sum(allot)} > P {P}"
    deprived = [a for a, d in zip(allot, desire) if a < d]
    if any(a > d for a, d in zip(allot, desire)):
        return False, "not conservative"
    if deprived and max(allot) > min(deprived) + 1:
        return False, "not fair"
    if deprived and sum(allot) < min(P, sum(desire)) and len(jobs) <= P:
        return False, "not efficient"
    return True, ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--P", type=int, default=4)
    ap.add_argument("--max-jobs", type=int, default=10)
    ap.add_argument("--kinds", default="gat,tbb,omp,gomp")
    ap.add_argument("--results", default=None, help="append a markdown row of counts to this file")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    shim = Shim(args.build)
    env = shim.env(P=args.P, est_cycle_ms=5)
    available = kinds_available(args.build)
    kinds = [k for k in args.kinds.split(",") if k in available]
    cycle_s = 0.005
    running = {}     # pid -> (Popen, kind, deadline)
    dead_at = {}     # pid -> time of death (killed or exited)
    counts = dict(steps=0, started=0, sigkill=0, sigterm=0, finished=0, violations=0, wrong=0, hangs=0)
    notes = []

    def reap():
        now = time.monotonic()
        for pid, (p, kind, deadline) in list(running.items()):
            if p.poll() is not None:
                out = p.stdout.read() if p.stdout else ""
                expect = available[kind][1]
                if p.returncode != 0 or (expect and expect not in out):
                    counts["wrong"] += 1
                    notes.append(f"{kind} pid {pid} exit {p.returncode}: {out.strip()[:80]} {p.stderr.read().strip()[:120]}")
                counts["finished"] += 1
                dead_at[pid] = now
                del running[pid]
            elif now > deadline:
                counts["hangs"] += 1
                notes.append(f"{kind} pid {pid} still running past its deadline")
                p.kill()
                p.wait()
                dead_at[pid] = now
                del running[pid]

    def check():
        s = shim.status(env)
        if s is None:
            return
        jobs = s["jobs"]
        ok, why = fair_efficient_conservative(jobs, s["P"])
        now = time.monotonic()
        rows = {j["pid"] for j in jobs}
        if not ok:
            counts["violations"] += 1
            notes.append(f"step {counts['steps']}: {why}: {[(j['desire'], j['allotment']) for j in jobs]}")
        for pid in rows:
            row_seen_at.setdefault(pid, now)
        # A dead row must be gone once a job that was already registered when it died has had
        # three est_cycles to update (jobs still starting, or not using a runtime yet, do not
        # update the table, so they cannot be expected to reclaim anything).
        updaters = [row_seen_at[pid] for pid in rows if pid in running]
        if updaters:
            stale = [pid for pid, t in dead_at.items()
                     if pid in rows and min(updaters) <= t and now - t > 3 * cycle_s + 0.05]
            if stale:
                counts["violations"] += 1
                notes.append(f"step {counts['steps']}: rows of dead pids {stale} survive")
        for pid, (p, kind, _) in running.items():
            # a job registers when its runtime starts; give it a moment before calling a row lost
            if pid not in rows and p.poll() is None and now - started_at[pid] > 0.5 and kind == "gat":
                counts["violations"] += 1
                notes.append(f"step {counts['steps']}: live job {pid} has no row")

    started_at = {}
    row_seen_at = {}
    for step in range(args.steps):
        counts["steps"] += 1
        action = rng.random()
        if action < 0.45 and len(running) < args.max_jobs:
            kind = rng.choice(kinds)
            argv = [a.format(desire=rng.randint(1, args.P), ms=rng.randint(20, 400), fib_n=rng.randint(22, 27))
                    for a in available[kind][0]]
            p = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            running[p.pid] = (p, kind, time.monotonic() + 60)
            started_at[p.pid] = time.monotonic()
            counts["started"] += 1
        elif action < 0.65 and running:
            pid = rng.choice(list(running))
            sig = signal.SIGKILL if rng.random() < 0.7 else signal.SIGTERM
            p = running.pop(pid)[0]
            p.send_signal(sig)
            p.wait()
            dead_at[pid] = time.monotonic()
            counts["sigkill" if sig == signal.SIGKILL else "sigterm"] += 1
        time.sleep(rng.uniform(0, 0.03))
        reap()
        check()
    deadline = time.monotonic() + 60
    while running and time.monotonic() < deadline:
        time.sleep(0.02)
        reap()
        check()
    for pid, (p, kind, _) in running.items():
        counts["hangs"] += 1
        p.kill()
    line = (f"| {time.strftime('%Y-%m-%d')} | seed {args.seed}, P={args.P}, kinds {','.join(kinds)} | {counts['steps']} | "
            f"{counts['started']} | {counts['sigkill'] + counts['sigterm']} | {counts['violations']} | {counts['wrong']} | "
            f"{counts['hangs']} |")
    print(counts)
    for n in notes[:20]:
        print("  " + n)
    if args.results:
        with open(args.results, "a") as f:
            f.write(line + "\n")
    bad = counts["violations"] + counts["wrong"] + counts["hangs"]
    print(f"campaign: {0 if bad else 1} passed, {1 if bad else 0} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
