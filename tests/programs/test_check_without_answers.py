"""The confinement check keeps its clock while the table does not answer.

Its windows (the start, a probe, a confirmation's unconfined cycles) are timed in wall and CPU
time. They used to step only on cycles the table answered, so a job whose updates waited out
their cycle (lock holders kept off the CPUs by the job's own unconfined threads, on 16 CPUs) ran
its start several cycles longer, and a job whose table's lock holder was stopped (SIGSTOP, a
debugger) while one of its probes ran stayed unconfined, on every CPU, until the holder was
resumed (sixty-fifth session, bench/results/2026-12-04c-device16core).

A real OpenMP program (tests/omp/omp_work, short static-loop regions, which mark progress) runs
under the shim in a P = 2 table, traced, its width and idle checks off and without the idle
processors (APSHIM_USE_IDLE=0: a stopped holder's processors would be used as idle ones after a
second, and a job on all its CPUs has nothing to confine). A stand-in job (gat_fill
--stop-holding-lock) joins, so that the program has allotment 1 and its check starts; 300 ms
after its join the stand-in takes the lock and stops itself in it, until 3.3 s after its join.
Checked, in the trace from the program's first row at allotment 1 (the stand-in's join) to the
resume: the check probed at least twice (its first probes come 250 ms after its 100 ms start,
then 1 s later) and each probe ended within 300 ms (no longer run of probe rows). Before, the
check stood still from the stop on: one probe at most, and one under way at the stop ran on to
the resume. And the program's answer is the native one.
"""
import itertools
import subprocess
import sys
import time

from apshim_test import Check, Shim, beside_stopping_holder, checksum, phases_in_order, require_two_cpus, wait_for

require_two_cpus("a second CPU for the program to be confined away from")
build, prog, gat_fill = sys.argv[1], sys.argv[2], sys.argv[3]
shim = Shim(build)
check = Check("shim.check_without_answers")
args = [prog, "static", "1500", "100"]  # 1500 regions of 64 items of 100 us: 5-10 s
native = shim.native(args, timeout=120)
check.expect(native.returncode == 0, f"runs natively ({native.returncode}: {native.stdout.strip()})")
env = shim.env(P=2, trace=shim.path("trace-%p.csv"), APSHIM_WIDTH_CHECK=0, APSHIM_IDLE_CHECK=0, APSHIM_USE_IDLE=0)
job, fill, ready = beside_stopping_holder(shim, check, args, env, gat_fill)
joined_at = time.monotonic()  # the stand-in has joined (gat_fill prints once its child has)
check.expect(ready[:2] == ["ready", "1"], f"the stand-in joined ({ready})")
holder = {}


def stopped_holder():
    global holder
    holder = (shim.status(env) or {}).get("lock_holder") or {}
    return holder.get("stopped") is True


check.expect(wait_for(stopped_holder, 5), f"the stand-in took the lock and stopped ({holder})")
time.sleep(max(0.0, joined_at + 3.3 - time.monotonic()))
resumed_at = time.monotonic()
if holder.get("pid", 0) > 0:
    subprocess.run(["kill", "-CONT", str(holder["pid"])])
fill.stdin.close()
fill.wait(timeout=30)
out, err = job.communicate(timeout=120)
check.expect(job.returncode == 0 and checksum(out) is not None and checksum(out) == checksum(native.stdout),
             f"the native answer ({job.returncode}: {out.strip()} against {native.stdout.strip()})")

rows = shim.trace_rows("trace-")
first = next((r for r in rows if r["allotment"] == 1), None)
check.expect(first is not None, "the trace has rows at allotment 1 (the stand-in's join)")
if first is not None and job.returncode == 0:
    # From the stand-in's join to the resume, less a margin for the dating (the first row at
    # allotment 1 is within a cycle or two of the join, the join a few ms before its "ready").
    lo = first["time_ms"]
    hi = first["time_ms"] + (resumed_at - joined_at) * 1000 - 150
    stop = [r for r in rows if lo <= r["time_ms"] <= hi]
    runs = [len(list(rows_of)) for phase, rows_of in itertools.groupby(r["confine_check"] for r in stop) if phase == "probe"]
    cycle_ms = (stop[-1]["time_ms"] - stop[0]["time_ms"]) / max(1, len(stop) - 1) if len(stop) > 1 else 5.0
    check.expect(len(stop) > 100, f"the trace covers the stop ({len(stop)} rows from {lo:.0f} to {hi:.0f} ms)")
    check.expect(len(runs) >= 2 and all(n * cycle_ms <= 300 for n in runs),
                 f"while the table did not answer the check went on probing, each probe ended within 300 ms "
                 f"(runs of probe rows: {runs}, {cycle_ms:.1f} ms a row; phases {phases_in_order(stop)})")
check.done()
