"""The shim is invisible to an OpenMP program's results: same answer with and without it, one
controller thread, nothing left at exit, the program's own thread bound respected, and
APSHIM_DISABLE=1 does nothing."""
import os
import sys
import time

from apshim_test import Check, Shim, count_threads, wait_for

build, prog = sys.argv[1], sys.argv[2]
shim = Shim(build)
check = Check("omp.transparent")
args = [prog, "30", "16", "2000", "5"]


def answer(out):
    return out.split("time_s=")[0]


native = shim.native(args)
env = shim.env(P=4, trace=shim.path("t-%p.csv"))
p = shim.spawn(args, env)
check.expect(wait_for(lambda: count_threads(p.pid, "apshim-ctl"), 5) == 1, "one controller thread while running")
out, err = p.communicate(timeout=60)
check.expect(p.returncode == 0 and answer(out) == answer(native.stdout), "same answer as without the shim")
check.expect(not [l for l in err.splitlines() if l.startswith("apshim[")], "the shim said nothing")
check.expect(shim.status(env)["jobs"] == [], "the job's row is gone after exit")
check.expect(sorted(os.listdir(shim.tmp)) == ["gat", f"t-{p.pid}.csv"], "only the table and the trace remain")

r = shim.run(args, shim.env(P=4, gat=shim.path("gat-bound"), OMP_NUM_THREADS=3))
teams = [int(l.split()[3]) for l in r.stderr.splitlines() if l.startswith("round")]
check.expect(teams and max(teams) <= 3 and answer(r.stdout) == answer(native.stdout),
             f"OMP_NUM_THREADS=3 stays an upper bound ({teams})")

env_off = shim.env(P=4, gat=shim.path("gat-off"), APSHIM_DISABLE=1)
p = shim.spawn(args, env_off)
time.sleep(0.3)
check.expect(count_threads(p.pid, "apshim-ctl") == 0, "APSHIM_DISABLE=1: no controller thread")
out, err = p.communicate(timeout=60)
check.expect(answer(out) == answer(native.stdout) and "apshim" not in err, "APSHIM_DISABLE=1: same answer, silent")
check.expect(not os.path.exists(env_off["APSHIM_GAT"]), "APSHIM_DISABLE=1: no table")
check.done()
