"""Loops whose schedule the runtime resolves (tests/omp/omp_runtime.c: `schedule(runtime)` with a
long and an unsigned long long index, inside a region and as `parallel for` regions, and `for`
loops with a task reduction, which gcc starts through GOMP_loop_start) under the shim, for one
compiler's build:
  - the native answer for every OMP_SCHEDULE (unset: libgomp's dynamic,1, libomp's static;
    static; dynamic,1; guided,4; auto), alone, throttled at allotment 1 with and without
    confinement (these loops are never parked: adapters/omp/gomp_hooks.cpp, kmp_hooks.cpp), and at
    APSHIM_P=8 (under a sanitizer unset and static only); every run bounded (no stall);
  - throttled with OMP_SCHEDULE=dynamic,1, each chunk fetched is a progress mark for the
    confinement check (trace column `marks`). With libgomp before its runtime loops were hooked
    (GOMP_loop_*runtime_{start,next}, GOMP_loop_start) a run marked only its barriers and its
    task-reduction loop, about a tenth of this bar (checked by hand with the older library).
Usage: test_runtime.py BUILD OMP_RUNTIME"""
import sys

from apshim_test import Check, CoRunner, Shim, any_sanitizer_preloaded, in_each_mode, run_measured

build, prog = sys.argv[1], sys.argv[2]
shim = Shim(build)
check = Check("omp.runtime")
args = [prog, "100", "2000", "200"]
SCHEDULES = [None, "static", "dynamic,1", "guided,4", "auto"]
# Under a sanitizer (CI's ASan and TSan stages: memory and races, not schedules) two schedules
# run every hook: unset (libgomp's dynamic,1: every fetch, parking's neighbour) and static.
if any_sanitizer_preloaded():
    SCHEDULES = [None, "static"]


def with_schedule(env, schedule):
    env = dict(env, OMP_NUM_THREADS="2")
    env.pop("OMP_SCHEDULE", None)
    if schedule:
        env["OMP_SCHEDULE"] = schedule
    return env


native = {}
for s in SCHEDULES:
    r = shim.run(args, with_schedule(shim.env(preload=False), s), timeout=60)
    check.expect(r.returncode == 0 and "checksum=" in r.stdout, f"OMP_SCHEDULE={s}: native run ({r.returncode})")
    native[s] = r.stdout
check.expect(len(set(native.values())) == 1, "natively every schedule gives the same answer")


def run_all(label, env):
    for s in SCHEDULES:
        m = run_measured(args, with_schedule(env, s), timeout=60)
        what = f"{label}, OMP_SCHEDULE={s}: {m.describe()}"
        check.expect(not m.timed_out and m.returncode == 0 and m.stdout == native[s], f"{what}: the native answer")


in_each_mode(shim, run_all)

# Marks: a dynamic,1 runtime loop fetches each item. Marks count only once the controller's first
# cycle turned timing on, so the run is long enough (about 1.5 s at allotment 1) for a first cycle
# delayed by a loaded machine to cost a small part of them.
rounds, n = 200, 2000
fetches = 3 * n * rounds  # the three runtime loops of each round; the task loop's are extra
env_m = shim.env(P=2, gat=shim.path("marks.gat"), trace=shim.path("marks-%p.csv"))
with CoRunner(shim, env_m, P=2):
    r = shim.run([prog, str(rounds), str(n), "200"], with_schedule(env_m, "dynamic,1"), timeout=120)
check.expect(r.returncode == 0 and "checksum=" in r.stdout, f"{rounds} rounds throttled, dynamic,1: runs ({r.returncode})")
marks = sum(row["marks"] for row in shim.trace_rows("marks-"))
check.expect(marks >= 0.6 * fetches, f"{rounds} rounds throttled, dynamic,1: {marks} progress marks for {fetches} chunks of "
             f"runtime loops (at least 0.6 a chunk: the fetches are marked)")
check.done()
