"""A throttled job that the confinement check does not start is confined at the controller's first
look, not at the end of its first cycle.

The check starts a job (runs it unconfined for a while, then compares: shim/confine_check.hpp) only
where one of its runtimes counts progress marks and the check is on. Any other job, a oneTBB
program, or an OpenMP one with APSHIM_CONFINE_CHECK=0, was confined first at its first cycle's end
(Controller::apply_allotment), so that its first cycle ran on every CPU: on 16 CPUs at the default
est_cycle 75 ms of CPU beyond one CPU at allotment 1 (NPB EP.W with the check off used 1.06-1.07
CPUs, bench/results/2026-12-05e-device16core). Now Controller::first_allotment confines it at once.

On 2 CPUs the test makes the first cycle long instead (est_cycle 200 ms), beside a stand-in
co-runner holding the rest of a P = 2 table (allotment 1 from the first look), and reads the
program's CPU time (its rusage) over its wall time: tests/tbb's tbb_rounds (4 rounds of 200 items
of 1 ms) and tests/omp's omp_work static loops with the check off. Before: 1.29-1.33 and 1.19-1.20
CPUs; now 1.00. Checked: under 1.1 CPUs, and the native answer.
"""
import resource
import sys
import time

from apshim_test import Check, CoRunner, Shim, any_sanitizer_preloaded, checksum, require_two_cpus

require_two_cpus("a second CPU for the first cycle to run on")
build, tbb_prog, omp_prog = sys.argv[1], sys.argv[2], sys.argv[3]
shim = Shim(build)
check = Check("shim.first_look")
cases = [("oneTBB", [tbb_prog, "4", "200", "1000"], {}),
         ("OpenMP, the check off", [omp_prog, "static", "4", "5000"], {"APSHIM_CONFINE_CHECK": "0"})]
for name, args, extra in cases:
    native = shim.native(args, timeout=120)
    check.expect(native.returncode == 0 and checksum(native.stdout) is not None,
                 f"{name}: runs natively ({native.returncode}: {native.stdout.strip()})")
    env = shim.env(P=2, gat=shim.path(f"gat-{len(extra)}"), est_cycle_ms=200, APSHIM_WIDTH_CHECK=0,
                   APSHIM_IDLE_CHECK=0, APSHIM_USE_IDLE=0, **extra)
    with CoRunner(shim, {k: v for k, v in env.items() if k != "LD_PRELOAD"}, P=2):
        before, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.monotonic()
        run = shim.run(args, env, timeout=120)
        wall, after = time.monotonic() - t0, resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    check.expect(run.returncode == 0 and checksum(run.stdout) == checksum(native.stdout),
                 f"{name}: the native answer ({run.returncode}: {run.stdout.strip()}; {run.stderr.strip()[:300]})")
    if any_sanitizer_preloaded():
        continue  # the sanitizers' own threads and shadow work are CPU time the program does not use
    check.expect(cpu / wall < 1.1, f"{name}: under 1.1 CPUs from the first look ({cpu:.3f} CPU-s in {wall:.3f} s: "
                 f"{cpu / wall:.2f})")
check.done()
