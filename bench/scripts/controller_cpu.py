#!/usr/bin/env python3
"""The shim's own controller thread's CPU use beside a full table: what one job pays to take part.

    bench/scripts/controller_cpu.py BUILD PROGRAM [--lib NAME=LIBAPSHIM ...] [--P 16] [--reps 5]
                                    [--seconds 1.0] [--out DIR] [--trace]

P - 1 stand-in co-runners (BUILD's gat_job, desire P) hold the rest of a fresh table of P, and
PROGRAM runs under each libapshim.so in turn (interleaved, reps times) with OMP_NUM_THREADS = P,
so that it is at allotment 1 with P threads. Over `--seconds`, from 0.8 s after its start, the
CPU time of its thread named apshim-ctl (utime + stime in /proc/PID/task/TID/stat) and of the rest
of the process is read. --trace also turns APSHIM_TRACE on (its threads_running column reads
every thread's /proc stat each cycle). Default --lib: BUILD's. Writes DIR/raw.csv and
DIR/summary.md (medians) with the machine's description; timing: run it on an idle machine.
"""
import argparse
import csv
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

TICK = os.sysconf("SC_CLK_TCK")


def task_ticks(pid):
    """{thread name: utime + stime ticks} summed by name over the process's threads."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                name = f.read().strip()
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue  # the thread ended
        out[name] = out.get(name, 0) + int(fields[11]) + int(fields[12])
    return out


def one_run(build, lib, program, P, seconds, trace):
    with tempfile.TemporaryDirectory(prefix="apshim-ctlcpu-") as tmp:
        env = {k: v for k, v in os.environ.items() if not k.startswith("APSHIM_") and k != "LD_PRELOAD"}
        env.update(APSHIM_GAT=os.path.join(tmp, "gat"), APSHIM_P=str(P), OMP_NUM_THREADS=str(P))
        stand_ins = [subprocess.Popen([os.path.join(build, "tests", "programs", "gat_job"), str(P), "600000"], env=env,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(P - 1)]
        try:
            time.sleep(0.5)
            penv = dict(env, LD_PRELOAD=lib)
            if trace:
                penv["APSHIM_TRACE"] = os.path.join(tmp, "trace-%p.csv")
            prog = subprocess.Popen(program, env=penv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(0.8)
            a, t0 = task_ticks(prog.pid), time.monotonic()
            time.sleep(seconds)
            b, t1 = task_ticks(prog.pid), time.monotonic()
            ended = prog.poll() is not None
            prog.terminate()  # the window is read: the rest of the run measures nothing
            prog.wait(timeout=300)
        finally:
            for s in stand_ins:
                s.terminate()
            for s in stand_ins:
                s.wait(timeout=30)
    if ended or "apshim-ctl" not in b:
        return None
    ctl = (b["apshim-ctl"] - a.get("apshim-ctl", 0)) / TICK / (t1 - t0)
    rest = sum(v - a.get(k, 0) for k, v in b.items() if k != "apshim-ctl") / TICK / (t1 - t0)
    return ctl, rest


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("program", nargs="+")
    ap.add_argument("--lib", action="append", default=[], metavar="NAME=LIBAPSHIM")
    ap.add_argument("--P", type=int, default=16)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--out", default="controller-cpu-out")
    ap.add_argument("--trace", action="store_true")
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    libs = [kv.split("=", 1) for kv in args.lib] or [["build", os.path.join(build, "shim", "libapshim.so")]]
    os.makedirs(args.out, exist_ok=True)
    rows = []
    for rep in range(args.reps):
        for name, lib in libs[rep % len(libs):] + libs[:rep % len(libs)]:
            r = one_run(build, os.path.abspath(lib), args.program, args.P, args.seconds, args.trace)
            if r is None:
                print(f"rep {rep} {name}: the program ended before the window did; lengthen it", flush=True)
                continue
            rows.append({"lib": name, "rep": rep, "controller_cpus": f"{r[0]:.4f}", "program_cpus": f"{r[1]:.4f}"})
            print(f"rep {rep} {name}: controller {r[0]:.3f} CPUs, the rest {r[1]:.3f}", flush=True)
    with open(os.path.join(args.out, "raw.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["lib", "rep", "controller_cpus", "program_cpus"])
        w.writeheader()
        w.writerows(rows)
    lines = [f"# The controller's CPU beside a full table (P = {args.P}, {args.P - 1} stand-ins, "
             f"{args.reps} interleaved repetitions of {args.seconds} s{', traced' if args.trace else ''})", "",
             f"Program: `{' '.join(args.program)}`, OMP_NUM_THREADS={args.P}. Machine: {platform.node()}, "
             f"{os.cpu_count()} CPUs, {platform.processor() or platform.machine()}, Linux {platform.release()}.", "",
             "| library | controller CPUs, median [min-max] | the rest of the process, median |", "|---|---|---|"]
    for name, lib in libs:
        c = [float(r["controller_cpus"]) for r in rows if r["lib"] == name]
        p = [float(r["program_cpus"]) for r in rows if r["lib"] == name]
        if c:
            lines.append(f"| {name} (`{lib}`) | {statistics.median(c):.3f} [{min(c):.3f}-{max(c):.3f}] | "
                         f"{statistics.median(p):.3f} |")
    with open(os.path.join(args.out, "summary.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
