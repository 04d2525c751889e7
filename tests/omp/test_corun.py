"""Two OpenMP jobs on P = 4 split 2 + 2 (table, and team sizes where the user opted in); a job in its serial phase gives
processors away; when one exits, the other's teams grow back to 4."""
import sys
import time

from apshim_test import Check, Shim, job_of, wait_for

build, prog = sys.argv[1], sys.argv[2]
shim = Shim(build)
check = Check("omp.corun")
# eta 0.25: a job wants more while up to 75% of its time is idle, so load from outside the
# test (teammates descheduled, others waiting at barriers) does not shrink it; a serial phase
# (one thread busy out of the allotment, most time idle) still does.
# APSHIM_SHRINK_TEAMS=1: the user's opt-in to sizing default teams by the allotment at forks
# (without it teams keep omp_get_max_threads() threads and confinement enforces the allotment).
env = shim.env(P=4, eta=0.25, OMP_NUM_THREADS=4, APSHIM_SHRINK_TEAMS=1)
a = shim.spawn([prog, "600", "16", "2000"], env)
b = shim.spawn([prog, "40", "16", "2000"], env)


def split():
    s = shim.status(env)
    return s if s and len(s["jobs"]) == 2 and sorted(j["allotment"] for j in s["jobs"]) == [2, 2] else None


check.expect(wait_for(split, 20) is not None, "status shows allotments 2 + 2")
out_b, err_b = b.communicate(timeout=120)
teams_b = [int(l.split()[3]) for l in err_b.splitlines() if l.startswith("round")][10:]
check.expect(teams_b and sorted(teams_b)[len(teams_b) // 2] == 2 and max(teams_b) <= 3,
             f"B's regions get teams of 2 while sharing ({teams_b})")
check.expect(b.returncode == 0 and "checksum=" in out_b, "B finished with its answer")
# C: short regions separated by 300 ms serial phases; A should get 3 while C is serial.
c = shim.spawn([prog, "4", "8", "1000", "300"], env)
seen = []


def a_gets_three():
    s = shim.status(env)
    if s and len(s["jobs"]) == 2:
        seen.append(sorted(j["allotment"] for j in s["jobs"]))
    return [1, 3] in seen


check.expect(wait_for(a_gets_three, 20), f"while C is serial the allotments are 1 + 3 (saw {seen[-4:]})")
c.communicate(timeout=60)
check.expect(wait_for(lambda: (job_of(shim.status(env), a.pid) or {}).get("allotment") == 4, 10),
             "alone again, A's allotment is 4")
time.sleep(0.5)  # a few regions under the new allotment
a.terminate()
out_a, err_a = a.communicate(timeout=60)
teams_a = [int(l.split()[3]) for l in err_a.splitlines() if l.startswith("round")]
check.expect(teams_a and max(teams_a[-10:]) == 4, f"A's last regions get teams of 4 again ({teams_a[-10:]})")
check.done()
