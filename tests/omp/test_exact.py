"""While dynamic adjustment is off (OpenMP's default, omp_set_dynamic(0), OMP_DYNAMIC=false) every
team has exactly the size OpenMP promises (omp_set_num_threads, a num_threads clause), even while
the allotment is smaller (a stand-in co-runner holds half the table); teams shrink to the
allotment only where the program allowed it (OMP_DYNAMIC=true) or the user opted in
(APSHIM_SHRINK_TEAMS=1), so this setup does throttle where it may."""
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

    for mode, want, extra in (("free", 4, {}), ("call", 4, {}), ("clause", 3, {}),
                              ("env", 4, {"OMP_DYNAMIC": "false", "OMP_NUM_THREADS": 4})):
        rc, t = teams(mode, **extra)
        check.expect(rc == 0 and len(t) == 80 and set(t) == {want}, f"{mode}: every team has {want} threads ({sorted(set(t))}, rc {rc})")
    rc, t = teams("free", APSHIM_SHRINK_TEAMS=1)
    check.expect(rc == 0 and t and min(t[5:]) <= 2, f"APSHIM_SHRINK_TEAMS=1: default teams shrink to the allotment ({t})")
    rc, t = teams("call", APSHIM_SHRINK_TEAMS=1)
    check.expect(rc == 0 and len(t) == 80 and set(t) == {4}, f"APSHIM_SHRINK_TEAMS=1 but omp_set_dynamic(0): teams of 4 ({sorted(set(t))})")
    rc, t = teams("free", OMP_DYNAMIC="true")
    check.expect(rc == 0 and t and min(t[5:]) <= 2, f"OMP_DYNAMIC=true: teams still shrink ({t})")
    rc, t = teams("clause", OMP_DYNAMIC="true")
    check.expect(t and min(t[5:]) <= 2, f"OMP_DYNAMIC=true: num_threads(3) teams shrink ({t})")
finally:
    co.kill()
    co.wait()
check.done()
