"""A job follows another job's arrival and exit at once, not at its next est_cycle (the row's
change word: gat/table.hpp, shim/controller.cpp follow_table), for one compiler's build of
omp_contract (one long region of static loops, a thread per CPU). The table's est_cycle is 10 s,
the longest allowed, so the job's own first cycle comes 10 s after it started: every change seen
before then was made by the wake-up alone.
  - alone in a table of P = 2: its threads may run on both CPUs;
  - a stand-in co-runner (gat_job) joins wanting both: the job's OpenMP threads are confined to one
    CPU (from /proc: Cpus_allowed_list), well before the job's first cycle;
  - the co-runner exits (SIGTERM: it leaves the table, as a shim job does at exit): the threads
    may run on both CPUs again, still before that cycle.
Not timed beyond that bound: without the wake-up nothing changes for 10 s.
Usage: test_follow.py BUILD OMP_CONTRACT"""
import os
import subprocess
import sys
import time

from apshim_test import Check, Shim, program_cpu_masks, require_two_cpus, wait_for

build, prog = sys.argv[1], sys.argv[2]
shim = Shim(build)
check = Check("omp.follow")
require_two_cpus("confinement to 1 of them shows nothing")

CYCLE_S = 10.0


def cpus_of(mask):
    n = 0
    for part in mask.split(","):
        a, _, b = part.partition("-")
        n += int(b or a) - int(a) + 1
    return n


def widest(pid):
    """CPUs the widest of the job's threads may run on (the controller thread, never confined,
    left out); None when there is no such thread."""
    return max((cpus_of(m) for m in program_cpu_masks(pid)), default=None)


env = shim.env(P=2, gat=shim.path("gat"), est_cycle_ms=int(CYCLE_S * 1000))
job = shim.spawn([prog, "1000", "400000000"], env)
start = time.monotonic()
co = None
try:
    check.expect(wait_for(lambda: (shim.status(env) or {}).get("jobs") and widest(job.pid) == 2, 5),
                 "alone, the job joined the table and its threads may run on both CPUs")
    gat_job = os.path.join(shim.build_dir, "tests", "programs", "gat_job")
    co = subprocess.Popen([gat_job, "2", "60000"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    narrowed = wait_for(lambda: widest(job.pid) == 1, CYCLE_S - 2)
    t = time.monotonic() - start
    check.expect(narrowed and t < CYCLE_S,
                 f"a co-runner joins: the job's threads are on one CPU {t:.2f} s after the job started, before its first {CYCLE_S:.0f} s cycle")
    co.terminate()
    co.wait(timeout=10)
    widened = wait_for(lambda: widest(job.pid) == 2, CYCLE_S - 2)
    t = time.monotonic() - start
    check.expect(widened and t < CYCLE_S,
                 f"the co-runner leaves: both CPUs again {t:.2f} s after the job started, before its first cycle")
    check.expect(job.poll() is None, "the job is still running (no stall, no crash)")
finally:
    if co and co.poll() is None:
        co.kill()
    job.kill()
    job.wait()
check.done()
