"""The shim's cost per task while it does not throttle, as a count of instructions (valgrind's
callgrind counts them, so the noise of a shared machine does not matter): the same program at two
sizes, natively and under the shim with no est_cycle during the run (10 s cycles: only the
per-task hooks run, no controller cycle), and the difference of the differences per task. Every
run is pinned to one CPU: a oneTBB program then starts no worker, whose steals (how many depends on
the scheduler, not on the program) take other paths and moved the count by +-7 per task from run to
run (CI counted 17 where this machine counted 10-11). Fails
when the shim's added instructions per task exceed the stated budget: a count, not a timing.
Usage: test_task_cost.py BUILD KIND BUDGET PROGRAM [NAME=VALUE ...] (extra shim environment)
  KIND tbb: PROGRAM is tests/tbb/tbb_fib (task_group, a task per call above cutoff 2)
  KIND omp: PROGRAM is tests/omp/omp_work_<compiler> (fib with two tasks per call above cutoff 2)
  KIND omp_untied: the same with untied tasks (fibu, BOTS's kind): one thread runs each at once,
    and libomp reports three switches and an end for each, against a switch and an end for a
    tied one (BOTS fib-final's millions of final tasks take that path with any team)"""
import os
import re
import shutil
import sys

from apshim_test import Check, Shim

build, kind, budget, prog = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
extra_env = dict(arg.split("=", 1) for arg in sys.argv[5:])
shim = Shim(build)
check = Check(f"cost.{kind}" + "".join(f" {k}={v}" for k, v in extra_env.items()))
if not shutil.which("valgrind"):
    print("SKIP: valgrind is not installed (scripts/install-deps.sh installs it)")
    check.done()


def calls(n, cutoff=2):
    """Calls of fib above the cutoff: each makes one TBB task, or two OpenMP tasks."""
    return 0 if n <= cutoff else 1 + calls(n - 1, cutoff) + calls(n - 2, cutoff)


def tasks(n):
    return calls(n) if kind == "tbb" else 2 * calls(n)  # fibu's root task cancels out


def argv(n):
    mode = "fibu" if kind == "omp_untied" else "fib"
    return [prog, str(n), "2", "1"] if kind == "tbb" else [prog, mode, str(n), "2", "1"]


def instructions(n, preload):
    out = shim.path(f"cg.{n}.{preload}")
    # One OpenMP thread: no teammate spins at a barrier for a time-dependent count (the hooks run
    # the same per task whatever the team).
    env = shim.env(preload=preload, est_cycle_ms=10000, gat=shim.path(f"gat.{n}"), OMP_NUM_THREADS=1,
                   **(extra_env if preload else {}))
    one_cpu = str(min(os.sched_getaffinity(0)))
    r = shim.run(["taskset", "-c", one_cpu, "valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"] + argv(n),
                 env, timeout=300)
    if r.returncode != 0:
        return None
    m = re.search(r"^totals: (\d+)", open(out).read(), re.M)
    return int(m.group(1)) if m else None


small, large = (20, 24) if kind == "tbb" else (16, 24)
counts = {(n, p): instructions(n, p) for n in (small, large) for p in (False, True)}
check.expect(all(counts.values()), f"all four runs under callgrind finished ({counts})")
if all(counts.values()):
    per_task = {p: (counts[(large, p)] - counts[(small, p)]) / (tasks(large) - tasks(small)) for p in (False, True)}
    added = per_task[True] - per_task[False]
    print(f"     instructions per task: native {per_task[False]:.0f}, under the shim {per_task[True]:.0f}, "
          f"added {added:.0f} (budget {budget:.0f})", flush=True)
    check.expect(added <= budget, f"the shim adds {added:.0f} instructions per task <= {budget:.0f}")
check.done()
