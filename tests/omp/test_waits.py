"""Waits inside constructs that are not barriers by name (tests/omp/omp_waits.c: a `single
copyprivate` whose thread computes while its teammates wait for the value, and a loop with a task
reduction whose end waits for the one task that computes) under the shim, for one compiler's build:
  - the native answer alone, throttled at allotment 1, and at APSHIM_P=8; every run bounded;
  - throttled (timed hooks), those waits read idle: one thread computes at a time, so the trace's
    median busy is at most 1.2 processors. gcc's waits are GOMP_single_copy_start/end and
    GOMP_workshare_task_reduction_unregister, hooked as waits in the forty-ninth session: before,
    a teammate waiting there read busy (median 1.33-1.51 over three runs); libomp's are barriers
    that OMPT reports (0.99).
Usage: test_waits.py BUILD OMP_WAITS"""
import statistics
import sys

from apshim_test import Check, CoRunner, Shim, run_measured

build, prog = sys.argv[1], sys.argv[2]
shim = Shim(build)
check = Check("omp.waits")
args = [prog, "40", "4000000"]  # about 0.4 s of computing, one thread at a time
two = {"OMP_NUM_THREADS": "2"}

native = shim.run(args, shim.env(preload=False, **two), timeout=60)
check.expect(native.returncode == 0 and "checksum=" in native.stdout, f"native run ({native.returncode})")


def run(label, env):
    m = run_measured(args, dict(env, **two), timeout=60)
    check.expect(not m.timed_out and m.returncode == 0 and m.stdout == native.stdout,
                 f"{label}: {m.describe()}: the native answer")


run("alone", shim.env(P=2, gat=shim.path("alone.gat")))
run("APSHIM_P=8", shim.env(P=8, gat=shim.path("p8.gat")))
env = shim.env(P=2, gat=shim.path("throttled.gat"), trace=shim.path("throttled-%p.csv"))
with CoRunner(shim, env, P=2):
    run("throttled", env)
rows = [row for row in shim.trace_rows("throttled-") if row["measure"] == "timed"]
busy = statistics.median(row["busy"] for row in rows) if rows else None
check.expect(len(rows) >= 20 and busy <= 1.2,
             f"throttled: the waits read idle (median busy {busy} processors over {len(rows)} timed cycles, at most 1.2)")
check.done()
