"""A long running region shrinks to a lowered allotment without waiting for the next fork:
threads beyond the allotment park before their next dynamic-loop chunk, and come back."""
import sys
import time

from apshim_test import Check, Shim, job_of, read_trace, wait_for

build, prog = sys.argv[1], sys.argv[2]
shim = Shim(build)
check = Check("omp.parking")
env = shim.env(P=4, OMP_NUM_THREADS=4)
trace = shim.path("a.csv")
# A: warm up with short regions (the team grows to 4), then one long region of 3000 x 1 ms.
# WSAP can dip for one cycle at a region boundary; if the long region happened to fork with a
# smaller team, the run says nothing about parking: try again (at most 3 times).
for attempt in range(3):
    a = shim.spawn([prog, "1", "3000", "1000"], dict(env, APSHIM_TRACE=trace, OMP_ROUNDS_WARMUP="40"))
    first = a.stderr.readline()  # "warmup done": the long region is forking now
    time.sleep(0.3)
    b = shim.spawn([prog, "60", "16", "2000"], env)
    b.communicate(timeout=120)
    out_a, err_a = a.communicate(timeout=120)
    err_a = first + err_a
    if "round 0 threads 4" in err_a:
        break
check.expect(a.returncode == 0 and "checksum=" in out_a, "A finished with its answer")
check.expect("round 0 threads 4" in err_a, f"A's long region started with a team of 4 (attempt {attempt + 1})")
rows = read_trace(trace)
shared = [r["usage"] for r in rows if r["allotment"] == 2]
check.expect(len(shared) >= 10, f"A ran at allotment 2 while B was there ({len(shared)} cycles)")
if shared:
    check.expect(sorted(shared)[len(shared) // 2] <= 2,
                 f"inside the same region, A's working threads dropped to its allotment (usage {shared[:30]})")
check.done()
