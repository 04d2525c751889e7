"""A bound libgomp task program held to one working thread whose CPU another program shares: one
held thread goes on (parking.hpp: at_barrier's CPU rule). Throttled (a stand-in co-runner holds the
rest of a table of P = 2: allotment 1), under OMP_PROC_BIND=true, where parking is the only hold.

Two jobs bound by OMP_PROC_BIND both put their thread 0 on CPU 0; where both were held to thread 0,
the other CPU stayed idle (BOTS uts + health medium, gcc: 8.4-11.8 s in some runs against 4.2-7.1 s
in others; bench/results/2026-12-07-bind-pairs-gcc-dev2core). The table's placement now picks the
working thread (held_key), but a task that runs cannot move, and a job that shrinks may keep its
work on another job's CPU. The rule: over a second or more, the job used less CPU than the
allotment by a third of a processor, so one held thread goes on, on its own CPU.

The program: `omp_work fortasks 2 100 20000`, two regions whose static loop makes 100 tasks of
20 ms (wall time) on both threads; they meet at the loop's end, and the thread on the job's CPU runs
them while the other stays out (omp.gcc.bind_tasks). A CPU hog outside the table (cpu_hog.py)
pinned to one CPU:
  - on the job's CPU: its working thread gets about half of it, and the held one goes in: more
    than 0.62 processors busy, and each region's tasks split between the threads. Without the rule
    0.49, and one thread ran every task (eighty-fifth session: the rule taken out, 0.75 with it);
  - on the other CPU (the held thread's): nothing to make room for: at most 1.15 processors, and one
    thread ran every task of each region.
Both the same answer as natively. CPU readings, so not under a sanitizer (scripts/test.sh).
Usage: test_bind_shared_cpu.py BUILD OMP_WORK_GCC"""
import os
import sys

from apshim_test import (Check, CoRunner, Shim, answer, fortasks_rounds, require_two_cpus, spawn_measured,
                         topology_order)
from cpu_hog import OutsideHog

require_two_cpus("a held thread on a CPU of its own beside a shared one is the case")
build, prog = sys.argv[1], sys.argv[2]
shim = Shim(build)
check = Check("omp.gcc.bind_shared_cpu")
argv = [prog, "fortasks", "2", "100", "20000"]


native = shim.run(argv, shim.env(preload=False, OMP_PROC_BIND="true"), timeout=120)
check.expect(native.returncode == 0, f"natively: exit 0 ({native.stderr.strip()[-200:]})")
# The co-runner joined first and keeps processor 0; the job's is processor 1.
cpus = topology_order(os.sched_getaffinity(0))
job_cpu, other_cpu = cpus[1], cpus[0]
for name, hog_cpu in (("hog on the job's CPU", job_cpu), ("hog on the other CPU", other_cpu)):
    env = shim.env(P=2, gat=shim.path(f"gat-{hog_cpu}"), OMP_PROC_BIND="true")
    with CoRunner(shim, env, P=2), OutsideHog(cpu=hog_cpu):
        rc, out, err, used = spawn_measured(shim, argv, env, timeout=60)
    check.expect(rc == 0 and answer(out) == answer(native.stdout), f"{name}: the same answer ({err.strip()[-200:]})")
    rounds = fortasks_rounds(err)
    split = [r for r in rounds if r[0] != r[1]]
    shown = f"{used and round(used, 2)} processors busy; regions (most by one thread, all): {rounds}"
    if hog_cpu == job_cpu:
        check.expect(used is not None and used > 0.62 and len(rounds) == 2 and split,
                     f"{name}: the held thread went on: {shown} (> 0.62, split)")
    else:
        check.expect(used is not None and used <= 1.15 and len(rounds) == 2 and not split,
                     f"{name}: held to one thread: {shown} (<= 1.15, none split)")
check.done()
