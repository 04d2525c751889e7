"""A pipeline of short GraphicsMagick processes (libgomp OpenMP) at allotment 1: five `gm convert
small.ppm -blur 0x24 out-N.ppm` runs in a row (800x600, 0.3-0.6 s each throttled), as a shell
loop runs them, each a job of its own under the shim, throttled by a stand-in co-runner (gat_job 2
at P=2). Every output must hash the same as natively and every process must have run at allotment
1 (its trace). Each process pays the confinement check's start (docs/enforcement.md), which a
short process cannot dilute: its blur makes no mark in its first 30 ms and one every 5-20 ms
after, too sparse for a hand-over-bound job, so its start must end once it has taken about 40
CPU-ms beyond one CPU's worth (its trace's cpu_ms: at most START_MAX_SURPLUS_MS, median of the five;
41-51 measured, 57-97 with the full 100 ms start; CPU, not wall time: on a machine whose other
CPU is busy a start takes nothing from it however long it lasts, 85-110 ms and -5 to 36 CPU-ms
beside a hog), and the five together must use at most PIPELINE_MAX_CPUS CPUs (CPU seconds of the
reaped processes over the wall time: 1.07-1.16 measured, 1.15-1.25 with the full start, 1.01
with no start at all). Inconclusive (exit 77) when other load left the pipeline less than
MIN_CAPACITY CPUs natively."""
import os
import resource
import subprocess
import time

from apshim_test import Check, CoRunner, Shim, read_trace, wait_for
from realprog import MIN_CAPACITY, build_dir, file_sha256, require
import inputs

GM = "/usr/bin/gm"
RUNS = 5
START_MAX_SURPLUS_MS = 65
PIPELINE_MAX_CPUS = 1.25


def start_of(rows):
    """(where the process's start ended, ms; the CPU-ms it took beyond one CPU's worth). A row names
    what the check decided at its cycle's end, so the start ran in the cycles of the rows after
    the first `start` row up to the first after the last (shim/README.md, `cpu_ms`)."""
    named = [i for i, row in enumerate(rows) if row["confine_check"] == "start"]
    if not named or named[-1] + 1 >= len(rows):
        return 0.0, 0.0
    ran = rows[named[0] + 1:named[-1] + 2]
    wall = ran[-1]["time_ms"] - rows[named[0]]["time_ms"]
    return ran[-1]["time_ms"], sum(row["cpu_ms"] for row in ran) - wall


def children_cpu_s():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def pipeline(shim, tag, env):
    """Runs the RUNS processes one after the other; (output hashes, return codes, CPUs used)."""
    cpu0, t0 = children_cpu_s(), time.monotonic()
    hashes, codes = [], []
    for i in range(RUNS):
        out = shim.path(f"out-{tag}-{i}.ppm")
        r = subprocess.run([GM, "convert", shim.path("small.ppm"), "-blur", "0x24", out], env=env, timeout=60,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        codes.append(r.returncode)
        if r.returncode != 0:
            print(f"[{tag}] run {i}: rc {r.returncode}, stderr: {r.stderr[-2000:]}", flush=True)
        hashes.append(file_sha256(out))
    wall = time.monotonic() - t0
    cpus = (children_cpu_s() - cpu0) / wall
    print(f"[{tag}] {RUNS} runs in {wall:.2f} s, {cpus:.2f} CPUs", flush=True)
    return hashes, codes, cpus


def main():
    check = Check("real.gm_pipeline")
    require(check, GM)
    shim = Shim(build_dir())
    if len(os.sched_getaffinity(0)) < 2:
        print("SKIP: needs two CPUs (parallel runs, throttled to one)", flush=True)
        raise SystemExit(77)
    inputs.write_ppm(shim.path("small.ppm"), 800, 600)

    reference, codes, native_cpus = pipeline(shim, "native", shim.env(preload=False))
    if not check.expect(codes == [0] * RUNS, f"native: every run exits 0 ({codes})"):
        check.done()

    env = shim.env(P=2, gat=shim.path("gat"), trace=shim.path("trace.%p"))
    with CoRunner(shim, env, 2, seconds=120):
        if not check.expect(bool(wait_for(lambda: (shim.status(env) or {}).get("jobs"), 10)),
                            "the co-runner (gat_job 2) holds the table at P=2"):
            check.done()
        hashes, codes, cpus = pipeline(shim, "throttled", env)
    check.expect(codes == [0] * RUNS, f"throttled: every run exits 0 ({codes})")
    check.expect(hashes == reference, "throttled: every output identical to the native run's")
    traces = [read_trace(os.path.join(shim.tmp, n)) for n in os.listdir(shim.tmp) if n.startswith("trace.")]
    allotments = sorted({row["allotment"] for rows in traces for row in rows})
    check.expect(len(traces) == RUNS and allotments == [1],
                 f"throttled: each of the {RUNS} processes a job at allotment 1 ({len(traces)} traces, {allotments})")
    starts = sorted(start_of(rows) for rows in traces)
    what = (f"{cpus:.2f}; natively {native_cpus:.2f}; starts " +
            ", ".join(f"{ms:.0f} ms (+{surplus:.0f} CPU-ms)" for ms, surplus in starts))
    if native_cpus < MIN_CAPACITY and cpus <= PIPELINE_MAX_CPUS:
        # Other load left the pipeline less than it could use anyway: no evidence either way.
        print(f"INCONCLUSIVE throttled at allotment 1: {what}: natively it reached only {native_cpus:.2f} < "
              f"{MIN_CAPACITY} CPUs (machine busy)", flush=True)
        if not check.failures:
            raise SystemExit(77)
    else:
        surpluses = sorted(surplus for _, surplus in starts)
        check.expect(starts and surpluses[len(surpluses) // 2] <= START_MAX_SURPLUS_MS,
                     f"throttled: the starts took at most {START_MAX_SURPLUS_MS} CPU-ms beyond one CPU (median; {what})")
        check.expect(cpus <= PIPELINE_MAX_CPUS, f"throttled: the pipeline used <= {PIPELINE_MAX_CPUS} CPUs ({what})")
    check.done()


main()
