"""tbb::finalize beside a co-runner, repeated: every blocking finalize returns (the shim drops its
global_control for the duration: with its control at 1 TBB orphaned the program's arena and
finalize spun for ever), TBB is back at its default right after (APSHIM_P = 4 > the 2 cores, so
the default is the shim's doing), and once TBB is used again the shim throttles it again."""
import re
import subprocess
import sys

from apshim_test import Check, Shim, wait_for

build, prog, rounds_prog = sys.argv[1], sys.argv[2], sys.argv[3]
shim = Shim(build)
check = Check("tbb.refinalize")
P = 4
env = shim.env(P=P)
co = shim.spawn([rounds_prog, "100000", "400", "200"], env)
try:
    wait_for(lambda: (shim.status(env) or {}).get("jobs"), 10)
    try:
        r = shim.run([prog, "4", "10", "400", "200"], env, timeout=60)
        out, rc = r.stdout, r.returncode
    except subprocess.TimeoutExpired as e:
        out, rc = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or ""), None
    iters = [tuple(int(x) for x in m) for m in re.findall(r"iter (\d+) ok=(\d) active_before=(\d+) active_after=(\d+)", out)]
    check.expect(rc == 0 and len(iters) == 4 and all(it[1] == 1 for it in iters),
                 f"all 4 blocking finalizes return ok (rc {rc}; {out.strip()!r})")
    check.expect(iters and all(it[3] == P for it in iters),
                 f"right after finalize TBB is at its default of APSHIM_P={P} (the shim's control is gone)")
    check.expect(len(iters) >= 2 and all(it[2] < P for it in iters[1:]),
                 "after each restart the shim throttles TBB again (limit below P while sharing)")
    s = shim.status(env)
    check.expect(s is not None and [j["pid"] for j in s["jobs"]] == [co.pid],
                 "the finalizing job left no row (only the co-runner's remains)")
finally:
    co.terminate()
    co.communicate(timeout=30)
check.done()
