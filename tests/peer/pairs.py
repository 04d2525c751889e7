#!/usr/bin/env python3
"""Co-running pairs of another project's programs (BOTS, NPB: built outside this repository, as
compare.py's suites are), natively, statically split and under the shim, interleaved.

    tests/peer/pairs.py BUILD_DIR --pair NAME 'CMD A' 'CMD B' [--pair ...] [--reps 3]
                        [--cwd DIR] [--out DIR] [--timeout 300] [--configs native,static,apshim]
                        [--shim-env VAR=VALUE ...] [--keep-traces DIR]

Configurations, each repetition running all of them in a rotating order:
  native  both programs as they are (each starts one OpenMP thread per CPU)
  static  OMP_NUM_THREADS = CPUs / 2 each: what a user splitting the machine by hand would do (and
          TBB_NUM_THREADS, the thread count NPB-CPP's NPB-TBB programs read: tests/peer/README.md)
  apshim  both with BUILD_DIR/shim/libapshim.so preloaded, sharing one fresh table (APSHIM_P = CPUs)
  apshim-dynamic  the same with OMP_DYNAMIC=true: programs that allow OpenMP's dynamic adjustment
          (not by default: --configs)
--shim-env sets a variable in the apshim configurations' environment (an APSHIM_* option, say).
--keep-traces DIR keeps each shim job's APSHIM_TRACE there, as PAIR.rREP.CONFIG.JOB.PID.csv (JOB A
or B; a run that reads far from its others can then be read cycle by cycle). The trace costs a
job about 0.03 CPUs at 16 threads.

Both jobs start together; a job's response time runs from that start to its exit. A run counts only
if both commands exit 0 (wrap/verify.sh makes a failed verification an exit status). Writes
OUT/raw.csv (one row per job and run) and OUT/summary.md (medians over repetitions of the pair's
mean response time and makespan, and their ratio to native). Timing: run it on an idle machine.
"""
import argparse
import csv
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

CONFIGS = ["native", "static", "apshim", "apshim-dynamic"]


def env_for(config, build, cpus, table, shim_env=()):
    env = {k: v for k, v in os.environ.items() if not k.startswith("APSHIM_") and k not in ("LD_PRELOAD", "OMP_NUM_THREADS", "OMP_DYNAMIC", "TBB_NUM_THREADS")}
    if config == "static":
        env["OMP_NUM_THREADS"] = env["TBB_NUM_THREADS"] = str(max(1, cpus // 2))
    elif config.startswith("apshim"):
        if config == "apshim-dynamic":
            env["OMP_DYNAMIC"] = "true"
        env["LD_PRELOAD"] = os.path.join(build, "shim", "libapshim.so")
        env["APSHIM_GAT"] = table
        env["APSHIM_P"] = str(cpus)
        for kv in shim_env:
            k, v = kv.split("=", 1)
            env[k] = v
    return env


def file_name(text):
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in text)


def run_pair(cmds, config, build, cpus, cwd, timeout, shim_env=(), traces=None):
    """traces: (DIR, PREFIX) to keep each shim job's trace as DIR/PREFIX.JOB.%p.csv, or None."""
    with tempfile.TemporaryDirectory(prefix="apshim-pairs-") as tmp:
        env = env_for(config, build, cpus, os.path.join(tmp, "gat"), shim_env)
        envs = []
        for job in "AB"[:len(cmds)]:
            e = dict(env)
            if traces and config.startswith("apshim"):
                e["APSHIM_TRACE"] = os.path.join(traces[0], f"{traces[1]}.{job}.%p.csv")
            envs.append(e)
        start = time.monotonic()
        procs = [subprocess.Popen(shlex.split(c), cwd=cwd, env=e, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL) for c, e in zip(cmds, envs)]
        out = [None] * len(procs)
        # Polled together: each job's own exit time (waiting on one first would give the other
        # its exit time only once the first has ended).
        while any(o is None for o in out):
            now = time.monotonic() - start
            for i, p in enumerate(procs):
                if out[i] is None and p.poll() is not None:
                    out[i] = (now, p.returncode)
            if now > timeout:
                for i, p in enumerate(procs):
                    if out[i] is None:
                        p.kill()
                        p.wait()
                        out[i] = (now, "timeout")
            time.sleep(0.002)
        return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("--pair", nargs=3, action="append", metavar=("NAME", "CMD_A", "CMD_B"), required=True)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--cwd", default=os.getcwd())
    ap.add_argument("--out", default="pairs-out")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--configs", default="native,static,apshim", help="from " + ",".join(CONFIGS))
    ap.add_argument("--shim-env", action="append", default=[], metavar="VAR=VALUE")
    ap.add_argument("--keep-traces", default=None, metavar="DIR", help="keep each shim job's trace there")
    args = ap.parse_args()
    configs = args.configs.split(",")
    if not configs or set(configs) - set(CONFIGS):
        sys.exit(f"--configs: choose from {','.join(CONFIGS)}")
    if any("=" not in kv for kv in args.shim_env):
        sys.exit("--shim-env takes VAR=VALUE")
    build = os.path.abspath(args.build)
    if not os.path.exists(os.path.join(build, "shim", "libapshim.so")):
        sys.exit(f"{build}/shim/libapshim.so not built")
    cpus = len(os.sched_getaffinity(0))
    os.makedirs(args.out, exist_ok=True)
    if args.keep_traces:
        os.makedirs(args.keep_traces, exist_ok=True)
        args.keep_traces = os.path.abspath(args.keep_traces)
    rows = []
    for name, a, b in args.pair:
        for rep in range(args.reps):
            order = configs[rep % len(configs):] + configs[:rep % len(configs)]
            for config in order:
                traces = (args.keep_traces, file_name(f"{name}.r{rep}.{config}")) if args.keep_traces else None
                res = run_pair([a, b], config, build, cpus, args.cwd, args.timeout, args.shim_env, traces)
                for job, (secs, rc) in zip("AB", res):
                    rows.append({"pair": name, "config": config, "rep": rep, "job": job, "seconds": f"{secs:.3f}", "rc": rc})
                print(f"{name} rep {rep} {config}: " + ", ".join(f"{j} {s:.2f}s rc={rc}" for j, (s, rc) in zip("AB", res)), flush=True)
    with open(os.path.join(args.out, "raw.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["pair", "config", "rep", "job", "seconds", "rc"])
        w.writeheader()
        w.writerows(rows)
    lines = [f"# Co-running pairs ({cpus} CPUs, {args.reps} interleaved repetitions; medians)", "",
             "| pair | config | mean response (s) | makespan (s) | ratio vs native (mean response) | failed runs |",
             "|---|---|---:|---:|---:|---:|"]
    for name, a, b in args.pair:
        base = None
        for config in configs:
            runs = {}
            for r in rows:
                if r["pair"] == name and r["config"] == config:
                    runs.setdefault(r["rep"], []).append(r)
            good = [v for v in runs.values() if all(x["rc"] == 0 for x in v)]
            failed = len(runs) - len(good)
            if not good:
                lines.append(f"| {name} | {config} | - | - | - | {failed} |")
                continue
            mean = statistics.median(statistics.mean(float(x["seconds"]) for x in v) for v in good)
            span = statistics.median(max(float(x["seconds"]) for x in v) for v in good)
            if config == "native":
                base = mean
            ratio = f"{mean / base:.2f}" if base else "-"
            lines.append(f"| {name} | {config} | {mean:.3f} | {span:.3f} | {ratio} | {failed} |")
    lines += ["", "Commands:", ""] + [f"- {name}: `{a}` + `{b}`" for name, a, b in args.pair]
    with open(os.path.join(args.out, "summary.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
