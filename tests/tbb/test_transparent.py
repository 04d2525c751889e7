"""The shim is invisible to a oneTBB program's results: same answer with and without it, one
controller thread while running, nothing left behind at exit; APSHIM_DISABLE=1 does nothing."""
import os
import sys
import time

from apshim_test import Check, Shim, count_threads, wait_for

build, prog = sys.argv[1], sys.argv[2]
shim = Shim(build)
check = Check("tbb.transparent")
args = [prog, "20", "300", "100", "20"]


def answer(out):
    return out.split("time_s=")[0]


native = shim.native(args)
env = shim.env(P=4, trace=shim.path("t-%p.csv"))
p = shim.spawn(args, env)
ctl = wait_for(lambda: count_threads(p.pid, "apshim-ctl"), 5)
check.expect(ctl == 1, f"exactly one controller thread while running (saw {ctl})")
out, err = p.communicate(timeout=60)
check.expect(p.returncode == 0 and answer(out) == answer(native.stdout), "same answer as without the shim")
check.expect(not [l for l in err.splitlines() if l.startswith("apshim[")], "the shim said nothing")
s = shim.status(env)
check.expect(s is not None and s["jobs"] == [], "the job's row is gone after exit")
files = sorted(os.listdir(shim.tmp))
check.expect(files == ["gat", f"t-{p.pid}.csv"], f"only the table and the trace remain ({files})")

r = shim.run(args, shim.env(P=4, gat=shim.path("gat-bound"), TBB_ROUNDS_LIMIT=3))
rounds = [int(l.split()[3]) for l in r.stderr.splitlines() if l.startswith("round")]
check.expect(rounds and max(rounds) <= 3 and answer(r.stdout) == answer(native.stdout),
             f"the program's own global_control(3) stays an upper bound ({rounds})")

env_off = shim.env(P=4, gat=shim.path("gat-disabled"), APSHIM_DISABLE=1)
p = shim.spawn(args, env_off)
time.sleep(0.3)
check.expect(count_threads(p.pid, "apshim-ctl") == 0, "APSHIM_DISABLE=1: no controller thread")
out, err = p.communicate(timeout=60)
check.expect(answer(out) == answer(native.stdout) and err.count("apshim") == 0, "APSHIM_DISABLE=1: same answer, silent")
check.expect(not os.path.exists(env_off["APSHIM_GAT"]), "APSHIM_DISABLE=1: no table")
check.done()
