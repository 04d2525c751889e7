"""Work only a TBB worker can take (a task_arena without slots for application threads) keeps
running while the job's allotment is 1: the shim's global_control never drops TBB below one
worker (at 1, TBB's soft limit is 0 workers and such work can wait for ever: oneTBB's
test_task_arena / test_task_group hung, tests/peer/RESULTS.md); allotment 1 is kept by parking."""
import sys

from apshim_test import Check, CoRunner, Shim, read_trace

build, prog = sys.argv[1], sys.argv[2]
shim = Shim(build)
check = Check("tbb.noslot")
args = [prog, "150", "3"]  # 150 rounds: about 1.5 s natively on 2 cores
native = shim.native(args, timeout=60)
check.expect(native.returncode == 0, "runs without the shim")
trace = shim.path("trace.csv")
env = shim.env(P=2, trace=trace)
# A stand-in job with desire 2 holds half of P = 2 for the whole run, in the table before the
# program starts (CoRunner waits for its row: spawned without waiting, it joined 80 ms into the
# program's run in a CI run under ASan, and the program had allotment 2 meanwhile): our allotment is 1.
with CoRunner(shim, env, P=2):
    r = shim.run(args, env, timeout=60)
check.expect(r.returncode == 0, f"exit 0 under the shim (rc {r.returncode}, stderr: {r.stderr.strip()[-200:]})")
check.expect(r.stdout == native.stdout, "same checksum as without the shim")
rows = read_trace(trace)
check.expect(rows and all(row["allotment"] == 1 for row in rows[2:]), "the allotment was 1 while it ran")
low = int(r.stderr.split("min_parallelism")[1])
check.expect(low >= 2, f"TBB's max_allowed_parallelism never went below 2 (min {low})")
check.done()
