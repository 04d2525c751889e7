"""Task parallelism under the shim (omp_work: LOOPY and fib with omp task).
  - LOOPY (one region whose single thread spawns equal long tasks) starts with a team of P;
    when a second job arrives, the running region shrinks to the allotment: threads beyond it
    park before their next task (usage <= allotment in the trace), with the right answer.
  - fib with nested tasks, co-running with another job so that threads park at task starts
    while holding suspended tasks: the escape rule keeps it from hanging, same answer.
Usage: test_tasks.py BUILD OMP_WORK"""
import sys
import time

from apshim_test import Check, Shim, read_trace

build, prog = sys.argv[1], sys.argv[2]
shim = Shim(build)
check = Check("omp.tasks")
env = shim.env(P=4)


def answer(out):
    return out.split(" time_s=")[0]


loopy = [prog, "loopy", "80", "30"]
fib = [prog, "fib", "30", "14", "30"]
other = [prog, "imbalanced", "400", "40"]
native_loopy = shim.run(loopy, shim.env(preload=False), timeout=120).stdout
native_fib = shim.run(fib, shim.env(preload=False), timeout=120).stdout

trace = shim.path("loopy.csv")
a = shim.spawn(loopy, dict(env, APSHIM_TRACE=trace))
time.sleep(0.4)  # alone: the allotment climbs to 4
b = shim.spawn(other, env)
out_a, err_a = a.communicate(timeout=120)
b.terminate()
b.communicate(timeout=60)
check.expect(a.returncode == 0 and answer(out_a) == answer(native_loopy), "LOOPY: same answer as without the shim")
check.expect("team 4" in err_a, f"LOOPY's one region started with a team of P=4 ({err_a.strip()})")
rows = read_trace(trace)
check.expect(any(r["allotment"] == 4 for r in rows), "LOOPY alone reached allotment 4")
# "busy" is the measured processors' worth of work per cycle (wall time inside task bodies, so
# 4 threads time-sharing 2 cores read 4): the usage column is capped by the allotment by
# construction and would prove nothing.
shared = [r["busy"] for r in rows if r["allotment"] == 2]
check.expect(len(shared) >= 10, f"LOOPY ran at allotment 2 while the other job was there ({len(shared)} cycles)")
if shared:
    check.expect(sorted(shared)[len(shared) // 2] <= 2.2,
                 f"inside its one region, LOOPY's working threads dropped to the allotment "
                 f"(busy {[round(x, 1) for x in shared[:30]]})")

b = shim.spawn(other, env)
time.sleep(0.2)
r = shim.run(fib, env, timeout=120)
b.terminate()
b.communicate(timeout=60)
check.expect(r.returncode == 0 and answer(r.stdout) == answer(native_fib),
             "fib with tasks, co-running (threads park at task starts): finished, same answer")
check.done()
