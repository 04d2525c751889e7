"""A program that turns dynamic adjustment off (omp_set_dynamic(0), or OMP_DYNAMIC=false) gets
exactly the teams it asks for under the shim, and so does a num_threads clause unless the
program turned dynamic adjustment on, even while the allotment is smaller (a stand-in co-runner
holds half the table); other teams shrink to the allotment (so this setup does throttle)."""
import subprocess
import sys
import time

from apshim_test import Check, Shim, wait_for

build, prog = sys.argv[1], sys.argv[2]
shim = Shim(build)
check = Check("omp.exact")
env = shim.env(P=4)
co = subprocess.Popen([f"{shim.build_dir}/tests/programs/gat_job", "4", "60000"], env=env,
                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
try:
    check.expect(wait_for(lambda: (shim.status(env) or {}).get("jobs"), 10), "the co-runner joined the table")


    def teams(mode, **extra):
        r = shim.run([prog, mode, "80"], dict(env, **{k: str(v) for k, v in extra.items()}), timeout=60)
        return r.returncode, [int(l.split()[3]) for l in r.stderr.splitlines() if l.startswith("round")]

    rc, t = teams("free")
    check.expect(rc == 0 and t and min(t[5:]) <= 2, f"dynamic adjustment left alone: teams shrink to the allotment ({t})")
    for mode, want, extra in (("call", 4, {}), ("clause", 3, {}), ("env", 4, {"OMP_DYNAMIC": "false", "OMP_NUM_THREADS": 4})):
        rc, t = teams(mode, **extra)
        check.expect(rc == 0 and len(t) == 80 and set(t) == {want}, f"{mode}: every team has {want} threads ({sorted(set(t))}, rc {rc})")
    rc, t = teams("free", OMP_DYNAMIC="true")
    check.expect(rc == 0 and t and min(t[5:]) <= 2, f"OMP_DYNAMIC=true: teams still shrink ({t})")
    rc, t = teams("clause", OMP_DYNAMIC="true")
    check.expect(t and min(t[5:]) <= 2, f"OMP_DYNAMIC=true: num_threads(3) teams shrink ({t})")
finally:
    co.kill()
    co.wait()
check.done()
