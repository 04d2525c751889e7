#!/usr/bin/python3
"""Manual tool (root, perf): throttling evidence that other load cannot hide. The tests' CPU-use
check needs spare CPUs; on a busy machine this answers instead: for how long were two or more
of the program's own threads (apshim-ctl excluded) on CPUs at the same instant? Enforcement at
allotment 1 makes that 0 whatever the mechanism (one CPU in the mask, or parked workers);
without it a 2-thread program on 2 CPUs overlaps some of the time even under load.

    tests/real/overlap.py BUILD {numpy,gm,flexbar} {native,alone,throttled}

Records `perf sched record -a` while running the tests' workload once (throttled: gat_job 2
holds the table at APSHIM_P=2 first), then reads `perf sched timehist`: every switch-out gives a
thread's on-CPU interval. Prints the run's /proc numbers and the overlap. Results: RESULTS.md.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
from apshim_test import Shim, run_measured, wait_for  # noqa: E402
import inputs  # noqa: E402

TIMEHIST = re.compile(r"\s*([\d.]+)\s+\[(\d+)\]\s+(.+?)\[(\d+)(?:/(\d+))?\]\s+[\d.]+\s+[\d.]+\s+([\d.]+)")


def workload(shim, kind):
    """(argv, extra environment, comm of its threads), as in test_<kind>.py."""
    if kind == "gm":
        inputs.write_ppm(shim.path("in.ppm"), 1600, 1200)
        return ["/usr/bin/gm", "convert", shim.path("in.ppm")] + ["-blur", "0x24"] * 3 + [shim.path("out.ppm")], {}, "gm"
    if kind == "numpy":
        return (["/usr/bin/python3", os.path.join(HERE, "numpy_work.py")],
                {"LD_LIBRARY_PATH": "/usr/lib/x86_64-linux-gnu/openblas-openmp"}, "python3")
    if kind == "flexbar":
        inputs.write_fastq(shim.path("reads"), 50000)
        return (["/usr/bin/flexbar", "-r", shim.path("reads.fastq"), "-a", shim.path("reads.fa"), "-n", "2", "-t",
                 shim.path("out")], {}, "flexbar")
    sys.exit(__doc__)


def on_cpu_intervals(data, comm):
    """{pid: [(start, end, tid, cpu)]} of the threads named comm, from perf sched timehist."""
    out = subprocess.run(["perf", "sched", "timehist", "-i", data], capture_output=True, text=True,
                         errors="replace").stdout
    by_pid = {}
    for line in out.splitlines():
        m = TIMEHIST.match(line)
        if not m or m.group(3).strip() != comm:
            continue
        t, cpu, _, tid, pid, run = m.groups()
        run_s = float(run) / 1000
        if run_s > 0:
            by_pid.setdefault(pid or tid, []).append((float(t) - run_s, float(t), tid, int(cpu)))
    return by_pid


def overlap(intervals):
    """(seconds with >= 1 thread on a CPU, seconds with >= 2 at once)."""
    events = sorted([(s, 1) for s, _, _, _ in intervals] + [(e, -1) for _, e, _, _ in intervals])
    level, last, busy, both = 0, None, 0.0, 0.0
    for t, d in events:
        if last is not None:
            busy += (t - last) if level >= 1 else 0.0
            both += (t - last) if level >= 2 else 0.0
        level, last = level + d, t
    return busy, both


def main():
    if len(sys.argv) != 4 or sys.argv[3] not in ("native", "alone", "throttled"):
        sys.exit(__doc__)
    build, kind, mode = sys.argv[1:]
    shim = Shim(build)
    argv, extra, comm = workload(shim, kind)
    env = shim.env(P=2, preload=mode != "native", **extra)
    co = None
    if mode == "throttled":
        co = subprocess.Popen([os.path.join(shim.build_dir, "tests", "programs", "gat_job"), "2", "150000"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        if not wait_for(lambda: (shim.status(env) or {}).get("jobs"), 10):
            sys.exit("the co-runner did not join")
    data = shim.path("perf.data")
    perf = subprocess.Popen(["perf", "sched", "record", "-a", "-o", data, "--", "sleep", "300"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        time.sleep(1.0)
        m = run_measured(argv, env, 120)
    finally:
        os.killpg(perf.pid, signal.SIGINT)
        perf.wait()
        if co:
            co.kill()
            co.wait()
    by_pid = on_cpu_intervals(data, comm)
    shutil.rmtree(shim.tmp, ignore_errors=True)  # perf.data and the inputs: tens of MB
    if not by_pid:
        sys.exit("perf recorded no thread of the program")
    pid = max(by_pid, key=lambda p: sum(e - s for s, e, _, _ in by_pid[p]))  # the program, not gat_job or perf
    busy, both = overlap(by_pid[pid])
    cpus = sorted({c for _, _, _, c in by_pid[pid]})
    print(f"{kind} {mode} ({shim.build_dir}): {m.describe()}; on CPU (perf): {busy:.2f} s, two or more of its "
          f"threads at once {both:.2f} s ({100 * both / busy if busy else 0:.1f}%), on CPUs {cpus}")
    return 0 if m.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
