"""How the shim measures a job (adapters/common/busy.hpp), in a real program of each runtime:
rounds of a parallel loop with ample parallelism, each followed by a serial phase.

At allotment P (alone, P = the CPUs) the job has all its threads, so its per-task hooks are
untimed and the threads' CPU clocks measure it: the trace says `clocks` for those cycles, and
`timed` where the allotment is below the threads. The clocks must still mean what WSAP needs:
cycles of the parallel loop read inefficiency near 0, cycles of the serial phase near 1.

Beside a stand-in co-runner that holds the rest of the table (allotment 1, throttled), the hooks
time every task again: the trace says `timed` there, and the result is the same as natively.
Usage: test_measure.py BUILD NAME PROGRAM  (PROGRAM: tests/tbb/tbb_rounds or tests/omp/omp_rounds_*)"""
import resource
import statistics
import sys
import time

from apshim_test import Check, CoRunner, Shim, idle_cpu_seconds, read_trace, usable_cpus

build, name, prog = sys.argv[1], sys.argv[2], sys.argv[3]
shim = Shim(build)
check = Check(f"measure.{name}")
P = usable_cpus()
# 3 rounds: 400 items of about 1 ms (0.2 s on two CPUs), then 300 ms of serial work.
args = [prog, "3", "400", "1000", "300"]


def checksum(out):
    return next((w for w in out.split() if w.startswith("checksum=")), None)


native = shim.run(args, shim.env(preload=False), timeout=120)
check.expect(native.returncode == 0 and checksum(native.stdout), f"runs natively ({native.stderr.strip()[-200:]})")

def median(xs):
    return statistics.median(xs) if xs else float("nan")


# Alone under the static policy the job keeps allotment P, so every cycle is measured by the
# clocks, serial phases included: what WSAP would read from them.
trace = shim.path("static.csv")
# CPU clocks cannot tell a loop short of parallelism from one short of CPUs: the loop's check
# needs the CPUs free (its CPU use plus the machine's idle time over the run).
idle0, wall0, kids0 = idle_cpu_seconds(), time.monotonic(), resource.getrusage(resource.RUSAGE_CHILDREN)
alone = shim.run(args, shim.env(P=P, trace=trace, est_cycle_ms=20, APSHIM_POLICY="static"), timeout=120)
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
used = kids.ru_utime + kids.ru_stime - kids0.ru_utime - kids0.ru_stime
capacity = (used + idle_cpu_seconds() - idle0) / (time.monotonic() - wall0)
check.expect(alone.returncode == 0 and checksum(alone.stdout) == checksum(native.stdout),
             f"alone: same result as natively ({checksum(alone.stdout)} vs {checksum(native.stdout)})")
rows = read_trace(trace)
measures = {r["measure"] for r in rows}
check.expect(rows and "clocks" in measures and "timed" not in measures,
             f"alone at allotment P, every measured cycle reads the CPU clocks, none timed hooks (saw {sorted(measures)})")
# The loop keeps every CPU busy; in the serial phase one thread runs outside the runtime (its
# serial code is not the runtime's work), so busy is near 0.
parallel = [r["inefficiency"] for r in rows if r["busy"] >= 0.8 * P]
serial = [r["inefficiency"] for r in rows if r["busy"] < 0.1 and r["measure"] == "clocks"][1:]  # not the first cycle
if capacity < 0.9 * P and not (len(parallel) >= 3 and median(parallel) < 0.25):
    print(f"INCONCLUSIVE ample parallelism: the job had only {capacity:.2f} of {P} CPUs free (machine busy)", flush=True)
else:
    check.expect(len(parallel) >= 3 and median(parallel) < 0.25,
                 f"ample parallelism reads inefficiency near 0 (median {median(parallel):.2f} over {len(parallel)} "
                 f"cycles; {capacity:.2f} CPUs free)")
check.expect(len(serial) >= 3 and median(serial) > 0.8,
             f"a serial phase reads inefficiency near 1 (median {median(serial):.2f} over {len(serial)} cycles)")

# Alone under WSAP: the serial phases bring the desire, and with it the allotment, down to 1,
# where the hooks time again. A cycle is measured by the clocks whenever the allotment in force
# during it (the previous row's) was P, and by timed hooks when it was 1 for two rows running
# (the first cycle after the switch still reads the clocks: tasks begun before it were not timed).
trace = shim.path("wsap.csv")
alone = shim.run(args, shim.env(P=P, trace=trace, est_cycle_ms=20), timeout=120)
check.expect(alone.returncode == 0 and checksum(alone.stdout) == checksum(native.stdout), "alone (WSAP): same result")
rows = read_trace(trace)
at_P = [cur for prev, cur in zip(rows, rows[1:]) if prev["allotment"] == P]
at_1 = [cur for before, prev, cur in zip(rows, rows[1:], rows[2:]) if before["allotment"] == prev["allotment"] == 1]
check.expect(at_P and all(r["measure"] == "clocks" for r in at_P),
             f"cycles at allotment P read the clocks ({sum(r['measure'] == 'clocks' for r in at_P)} of {len(at_P)})")
check.expect(at_1 and all(r["measure"] == "timed" for r in at_1),
             f"cycles at allotment 1 (serial phases) are timed ({sum(r['measure'] == 'timed' for r in at_1)} of {len(at_1)})")

# Throttled: the hooks time every task again.
gat = shim.path("throttled.gat")
env = shim.env(P=P, gat=gat, est_cycle_ms=20)
with CoRunner(shim, env, P):
    trace = shim.path("throttled.csv")
    throttled = shim.run(args, dict(env, APSHIM_TRACE=trace), timeout=120)
check.expect(throttled.returncode == 0 and checksum(throttled.stdout) == checksum(native.stdout),
             f"throttled: same result as natively ({checksum(throttled.stdout)})")
rows = read_trace(trace)
check.expect(rows and all(r["allotment"] == 1 for r in rows[1:]), "throttled: allotment 1 after the first cycle")
# From the third cycle on, the allotment was 1 throughout each cycle. oneTBB's stall valve lifts
# the cap (and with it the timing) while no task began for 100 ms, which a loaded machine can
# cause for a cycle or two: at least 9 in 10 cycles.
timed = [r for r in rows[2:] if r["measure"] == "timed"]
check.expect(len(rows) > 2 and len(timed) >= 0.9 * (len(rows) - 2),
             f"throttled: the hooks time the tasks ({len(timed)} of {len(rows) - 2} cycles timed)")
check.done()
