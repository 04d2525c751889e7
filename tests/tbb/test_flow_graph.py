"""A oneTBB flow graph, whose workers hold their next node (a bypass task) when a node ends,
finishes under the shim with the same answer: alone (throttled down to allotment 1 by its
serial chains) and beside a co-runner with ample parallelism (its surplus workers park).
The first version of the adapter parked such a worker with the graph's only runnable task in
hand, forever: this test then fails on its time-out, not on speed."""
import os
import subprocess
import sys

from apshim_test import Check, Shim, read_trace

build, graph, rounds_prog = sys.argv[1], sys.argv[2], sys.argv[3]
shim = Shim(build)
check = Check("tbb.flow_graph")


def run(argv, env):
    try:
        return shim.run(argv, env, timeout=30)
    except subprocess.TimeoutExpired:
        return None


serial = [graph, "20", "1", "50", "100"]    # parallelism 1
branchy = [graph, "40", "3", "30", "100"]   # parallelism 3
# A serial chain is throttled to allotment 1 after its first measured cycle, the moment the old
# adapter parked the worker that held the chain's next node while the main thread waited for
# it (it hung in 5 of 8 runs when jobs started at allotment 1). A row's usage is capped by the
# limit in force (its allotment is the one that follows): some row must show usage 1.
# APSHIM_USE_IDLE=0: alone, a job would otherwise keep the processors nobody holds (usage P).
native = run(serial, shim.env(preload=False))
hung = []
for attempt in range(8):
    trace = shim.path(f"serial{attempt}.csv")
    r = run(serial, shim.env(P=4, gat=shim.path(f"gat-s{attempt}"), trace=trace, APSHIM_USE_IDLE=0))
    rows = read_trace(trace) if r is not None and os.path.exists(trace) else []
    if r is None or r.returncode != 0 or r.stdout != native.stdout or not any(row["usage"] == 1 for row in rows):
        hung.append(attempt)
check.expect(not hung, f"serial chain alone, 8 runs throttled to one thread: all finish with the native answer "
                       f"({native.stdout.strip()}; failed: {hung})")
native = run(branchy, shim.env(preload=False))
r = run(branchy, shim.env(P=4, gat=shim.path("gat-b")))
check.expect(r is not None and r.returncode == 0 and r.stdout == native.stdout,
             f"three chains alone: finishes with the native answer ({native.stdout.strip()})")

# Beside a co-runner: both jobs throttled below their desire, surplus workers park.
env = shim.env(P=4, gat=shim.path("gat-corun"))
co = shim.spawn([rounds_prog, "100000", "400", "200"], env)
try:
    for name, argv in (("serial chain", serial), ("three chains", branchy)):
        native = run(argv, shim.env(preload=False))
        r = run(argv, env)
        check.expect(r is not None and r.returncode == 0 and r.stdout == native.stdout,
                     f"{name} beside a co-runner: finishes with the native answer")
finally:
    co.terminate()
    co.communicate(timeout=30)
check.done()
