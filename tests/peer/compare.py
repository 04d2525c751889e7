#!/usr/bin/env python3
"""Runs another project's test executables natively and under the shim; the pass/fail sets
must be equal. Third-party code is never part of this repository: build the suite yourself
(see tests/peer/README.md) and point this script at it.

    tests/peer/compare.py BUILD_DIR TEST_DIR [--glob 'test_*'] [--manifest FILE]
                          [--timeout 300] [--reps 1] [--P N] [--corunner DESIRE [--corunners K]]
                          [--shim-env VAR=VALUE ...] [--results FILE.md] [--title TEXT]
                          [--only PATTERN] [--logs DIR] [--no-trace] [--keep-traces DIR]

Cases: every executable under TEST_DIR whose name matches --glob, run without arguments; or,
with --manifest, one case per line `NAME [VAR=VALUE ...] PROGRAM [ARG ...]` (shell quoting,
`#` comments, PROGRAM relative to TEST_DIR).

Each case runs --reps times natively and --reps times under the shim (alternating), each shim
run with a private table (APSHIM_GAT in a fresh temporary folder) and a trace
(APSHIM_TRACE, one CSV per process) that shows the shim was attached: controller cycles, the
allotments it applied, the busy fraction it measured, and how long the confinement check ran the
job unconfined, by phase (start, probe, confirm, handover); --keep-traces DIR keeps each CSV
there as CASE.REP.PID.csv, to read a run's phases cycle by cycle. --P sets APSHIM_P (the table's processor
count; above the core count libtbb is shown that many CPUs, so it creates that many threads).
--corunner D starts build/tests/programs/gat_job D in the same table for the duration of each
shim run, a stand-in job that desires D processors and uses no CPU, so the test's allotment is
held below its thread count and the shim throttles. --corunners K starts K of them: on P cores,
`--P P --corunner P --corunners P-1` gives the test allotment 1 (DP shares the table equally).

Each run's CPU use (its CPU seconds over its wall time, from the kernel's accounting of the
finished process and every descendant it waited for) is reported beside its time: under a
co-runner it shows whether the allotment held (at allotment 1, about 1 or less).

Verdict per case: `same` when every run had the same outcome; `flaky natively` when the
native runs disagree among themselves and the shim runs show no outcome the native runs did
not; `DIFF` otherwise (an outcome under the shim never seen natively). Exit status 1 when any
case is DIFF.
"""
import argparse
import csv
import fnmatch
import glob
import os
import re
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def load_cases(args):
    if args.manifest:
        cases = []
        with open(args.manifest) as f:
            for line in f:
                tok = shlex.split(line, comments=True)
                if not tok:
                    continue
                name, rest = tok[0], tok[1:]
                env = {}
                while rest and ASSIGN.match(rest[0]):
                    k, v = rest.pop(0).split("=", 1)
                    env[k] = v
                if not rest:
                    sys.exit(f"manifest line without a program: {line.strip()}")
                prog = rest[0] if os.path.isabs(rest[0]) else os.path.join(args.test_dir, rest[0])
                cases.append((name, env, [prog] + rest[1:]))
        return cases
    tests = sorted(os.path.join(root, f) for root, _, files in os.walk(args.test_dir) for f in files
                   if fnmatch.fnmatch(f, args.glob) and os.access(os.path.join(root, f), os.X_OK)
                   and not f.endswith((".so", ".cmake", ".txt", ".py", ".sh")))
    return [(os.path.relpath(t, args.test_dir), {}, [t]) for t in tests]


def children_cpu_s():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(argv, env, timeout):
    """Outcome ('pass', 'fail(N)', 'signal(NAME)', 'timeout'), seconds, stderr, CPUs used (CPU
    seconds over wall seconds)."""
    cpu0 = children_cpu_s()
    t = time.monotonic()
    p = subprocess.Popen(argv, env=env, cwd=os.path.dirname(argv[0]), stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace",
                         start_new_session=True)
    try:
        _, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        _, err = p.communicate()
        dt = time.monotonic() - t
        return "timeout", dt, err, (children_cpu_s() - cpu0) / dt
    dt = time.monotonic() - t
    cpus = (children_cpu_s() - cpu0) / dt if dt > 0 else 0.0
    rc = p.returncode
    if rc == 0:
        out = "pass"
    elif rc < 0:
        out = f"signal({signal.Signals(-rc).name})"
    else:
        out = f"fail({rc})"
    return out, dt, err, cpus


def trace_summary(folder):
    """(cycles, min allotment, max allotment, max busy, cycles the confinement check left the job
    unconfined: `handover`, {phase: ms}) over every process's trace. The last: the wall time the
    check ran a throttled job unconfined (cpus 0 while confine_check says start, probe, confirm or
    handover; or spinning: a BLIS team left unconfined), by phase: what it cost the co-runners,
    once per CPU the job's threads then took beyond its allotment (on P cores up to P - 1 CPUs
    each)."""
    cycles, allots, busy, handover, unconfined = 0, [], 0.0, 0, {}
    for path in glob.glob(os.path.join(folder, "trace.*")):
        try:
            with open(path) as f:
                last_ms = 0.0
                for row in csv.DictReader(f):
                    cycles += 1
                    allots.append(int(row["allotment"]))
                    busy = max(busy, float(row["busy"]))
                    phase = row.get("confine_check")
                    handover += phase == "handover"
                    t = float(row["time_ms"])
                    if row["cpus"] == "0" and phase in ("start", "probe", "confirm", "handover", "spinning"):
                        unconfined[phase] = unconfined.get(phase, 0.0) + t - last_ms
                    last_ms = t
        except (OSError, ValueError, KeyError):
            continue
    return cycles, (min(allots) if allots else 0), (max(allots) if allots else 0), busy, handover, unconfined


def show_unconfined(ms):
    return " ".join(f"{k} {v:.0f}" for k, v in sorted(ms.items())) or "-"


def verdict(native, shim):
    if len(set(native)) == 1 and set(shim) == set(native):
        return "same"
    if not set(shim) - set(native):
        return "flaky natively" if len(set(native)) > 1 else "same"
    return "DIFF"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("test_dir")
    ap.add_argument("--glob", default="test_*")
    ap.add_argument("--manifest", default=None)
    ap.add_argument("--only", default=None, help="run only cases whose name matches this fnmatch pattern")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per run")
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--P", type=int, default=None)
    ap.add_argument("--corunner", type=int, default=None, metavar="DESIRE")
    ap.add_argument("--corunners", type=int, default=1, metavar="K", help="how many co-runners (default 1)")
    ap.add_argument("--shim-env", action="append", default=[], metavar="VAR=VALUE")
    ap.add_argument("--no-trace", action="store_true")
    ap.add_argument("--results", default=None)
    ap.add_argument("--title", default=None)
    ap.add_argument("--logs", default=None, help="folder for the stderr of every run that did not pass")
    ap.add_argument("--keep-traces", default=None, metavar="DIR", help="keep every shim run's trace CSVs there")
    args = ap.parse_args()
    args.test_dir = os.path.abspath(args.test_dir)
    build = os.path.abspath(args.build)
    lib = os.path.join(build, "shim", "libapshim.so")
    gat_job = os.path.join(build, "tests", "programs", "gat_job")
    if not os.path.exists(lib):
        sys.exit(f"no shim at {lib}")
    if args.corunner and not os.path.exists(gat_job):
        sys.exit(f"--corunner needs {gat_job}")
    cases = load_cases(args)
    if args.only:
        cases = [c for c in cases if fnmatch.fnmatch(c[0], args.only)]
    base = {k: v for k, v in os.environ.items() if not k.startswith("APSHIM_") and k != "LD_PRELOAD"}
    rows, differ, flaky, notes = [], [], [], {}
    for folder in (args.logs, args.keep_traces):
        if folder:
            os.makedirs(folder, exist_ok=True)

    def file_name(text):  # a case's name and run as a file name in --logs or --keep-traces
        return re.sub(r"[^A-Za-z0-9_.-]", "_", text)

    def keep(name, side, rep, out, err):
        if args.logs and out != "pass":
            with open(os.path.join(args.logs, file_name(f"{name}.{side}.{rep}.err")), "w") as f:
                f.write(f"{out}\n{err}")
    for i, (name, cenv, argv) in enumerate(cases):
        native, shim, tn, ts, traces, cn, cs = [], [], 0.0, 0.0, [], [], []
        for rep in range(args.reps):
            out, dt, err, cpus = run(argv, dict(base, **cenv), args.timeout)
            keep(name, "native", rep, out, err)
            native.append(out)
            tn += dt
            cn.append(cpus)
            tmp = tempfile.mkdtemp(prefix="apshim-peer-")
            env = dict(base, **cenv, LD_PRELOAD=lib, APSHIM_GAT=os.path.join(tmp, "gat"))
            if not args.no_trace:
                env["APSHIM_TRACE"] = os.path.join(tmp, "trace.%p")
            if args.P:
                env["APSHIM_P"] = str(args.P)
            for kv in args.shim_env:
                k, v = kv.split("=", 1)
                env[k] = v
            co = []
            if args.corunner:
                co_env = {k: v for k, v in env.items() if k not in ("LD_PRELOAD", "APSHIM_TRACE")}
                co = [subprocess.Popen([gat_job, str(args.corunner), str(10 * 1000 * (args.timeout + 60))], env=co_env,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                      for _ in range(args.corunners)]
                time.sleep(0.05 + 0.01 * len(co))  # let them join first
            out, dt, err, cpus = run(argv, env, args.timeout)
            for c in co:
                c.kill()
                c.wait()
            keep(name, "shim", rep, out, err)
            shim.append(out)
            ts += dt
            cs.append(cpus)
            traces.append(trace_summary(tmp))
            if args.keep_traces:
                for path in glob.glob(os.path.join(tmp, "trace.*")):
                    pid = path.rsplit(".", 1)[1]
                    shutil.copy(path, os.path.join(args.keep_traces, file_name(f"{name}.{rep}.{pid}.csv")))
            for line in err.splitlines():
                if line.startswith("apshim["):
                    notes.setdefault(name, set()).add(re.sub(r"^apshim\[\d+\]", "apshim", line)[:200])
            shutil.rmtree(tmp, ignore_errors=True)
        v = verdict(native, shim)
        if v == "DIFF":
            differ.append(name)
        elif v == "flaky natively":
            flaky.append(name)
        cyc = sum(t[0] for t in traces)
        amin = min((t[1] for t in traces if t[0]), default=0)
        amax = max((t[2] for t in traces if t[0]), default=0)
        busy = max((t[3] for t in traces), default=0.0)
        hand = sum(t[4] for t in traces)
        unconf = {}
        for t in traces:
            for k, ms in t[5].items():
                unconf[k] = unconf.get(k, 0.0) + ms / args.reps
        rows.append((name, native, shim, v, tn / args.reps, ts / args.reps, max(cn), max(cs), cyc, amin, amax, busy, hand,
                     show_unconfined(unconf)))
        show = lambda o: o[0] if len(set(o)) == 1 else ",".join(o)
        print(f"[{i + 1}/{len(cases)}] {name:<48} native {show(native):<10} shim {show(shim):<10} {v:<14} "
              f"{tn / args.reps:6.1f}s {ts / args.reps:6.1f}s CPUs {max(cn):.2f} {max(cs):.2f} "
              f"cycles {cyc} allot {amin}-{amax} busy {busy:.2f} handover {hand} unconfined ms {show_unconfined(unconf)}",
              flush=True)
    npass = sum(all(o == "pass" for o in r[1]) for r in rows)
    spass = sum(all(o == "pass" for o in r[2]) for r in rows)
    attached = sum(r[8] > 0 for r in rows)
    summary = (f"{len(rows)} cases x {args.reps} runs each way; passed in every run natively: {npass}, "
               f"under the shim: {spass}; differing (DIFF): {len(differ)} {differ}; flaky natively: "
               f"{len(flaky)} {flaky}; shim controller traced in {attached} cases")
    print(summary)
    if args.results:
        co = f", {args.corunners} co-runners" if args.corunners > 1 else ", co-runner"
        opts = f"APSHIM_P={args.P or '(default)'}" + (f"{co} desire {args.corunner}" if args.corunner else "") + \
               "".join(f", {kv}" for kv in args.shim_env) + f", timeout {args.timeout} s, reps {args.reps}"
        lines = [f"## {args.title or os.path.basename(args.test_dir)}", "", opts, "", summary, "",
                 "| case | native | under the shim | verdict | native s | shim s | native CPUs | shim CPUs | shim cycles | allotment | max busy | unconfined cycles (hand-over bound) | unconfined ms by phase (mean per run) |",
                 "|---|---|---|---|---:|---:|---:|---:|---:|---|---:|---:|---|"]
        fmt = lambda o: o[0] if len(set(o)) == 1 else " ".join(o)
        lines += [f"| {n} | {fmt(a)} | {fmt(b)} | {v} | {x:.1f} | {y:.1f} | {pn:.2f} | {ps:.2f} | {c} | {lo}-{hi} | {bz:.2f} | {h} | {u} |"
                  for n, a, b, v, x, y, pn, ps, c, lo, hi, bz, h, u in rows]
        if notes:
            lines += ["", "Shim messages on stderr:", ""]
            lines += [f"- {n}: " + "; ".join(sorted(m)) for n, m in sorted(notes.items())]
        with open(args.results, "a") as f:
            f.write("\n".join(lines) + "\n\n")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
