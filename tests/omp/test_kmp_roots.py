"""libomp counts more of its threads than CPUs while confinement has the team share CPUs
(adapters/omp/kmp_roots.hpp): the shim keeps a thread of its own registered with libomp as a root,
named apshim-kmp, only then; it leaves, and libomp counts it out, when the sharing ends, and at
exit. Where the user capped libomp's threads in all (KMP_ALL_THREADS) there is none. The program
(omp_phases: a burst of tiny regions, whose hand-overs are what libomp's yielding speeds up, then
large ones) gives the native answer in every mode; what the roots buy is timed in
docs/enforcement.md, not here.
Usage: test_kmp_roots.py BUILD PROGRAM (a clang program)"""
import sys
import time

from apshim_test import Check, CoRunner, Shim, require_two_cpus, stdout_words, thread_names

require_two_cpus("roots follow confinement, which one CPU never is")
build, prog = sys.argv[1], sys.argv[2]
shim = Shim(build)
check = Check("omp.kmp_roots")
ROOT = "apshim-kmp"


def run(tag, env, burst_ms):
    """Runs omp_phases (burst_ms of tiny regions, then 2 rounds of 20 ms), sampling its threads
    every 20 ms: the answer and [(seconds since start, roots seen)]."""
    p = shim.spawn([prog, str(burst_ms), "2", "20"], env)
    start, seen = time.monotonic(), []
    while p.poll() is None:
        seen.append((time.monotonic() - start, thread_names(p.pid).count(ROOT)))
        time.sleep(0.02)
    out, err = p.communicate(timeout=60)
    check.expect(p.returncode == 0 and "checksum=" in out, f"{tag}: runs ({p.returncode}: {out.strip()} {err.strip()[:300]})")
    check.expect(stdout_words(out).get("checksum") == native_sum, f"{tag}: the native answer ({out.strip()})")
    return seen


native_sum = stdout_words(shim.native([prog, "300", "2", "20"]).stdout).get("checksum")
check.expect(native_sum is not None, "natively: runs")

# Alone (the width check off: its probes confine the job to one CPU for moments, and roots follow
# any confinement that shares CPUs): never a root.
alone = run("alone", shim.env(P=2, gat=shim.path("alone"), APSHIM_WIDTH_CHECK=0), 1500)
check.expect(max(n for _, n in alone) == 0, f"alone: no root ({max(n for _, n in alone)} seen)")

# Throttled while a co-runner holds the table (1.5 s), then alone in it: one root (2 CPUs, a team
# of 2: libomp counts 3 threads), none once the co-runner left.
env = shim.env(P=2, gat=shim.path("throttled"), APSHIM_WIDTH_CHECK=0)
with CoRunner(shim, env, 2, seconds=1.5):
    thr = run("throttled, then alone", env, 3000)
during = [n for t, n in thr if 0.5 <= t <= 1.2]
after = [n for t, n in thr if t >= 2.3]
check.expect(during and max(during) == 1 and during.count(1) >= len(during) // 2,
             f"throttled: one root while confined ({during.count(1)} of {len(during)} samples, most {max(during, default=0)})")
check.expect(after and max(after) == 0, f"alone again: the root has left ({after.count(0)} of {len(after)} samples none)")

# Throttled to the end: the root leaves at exit, which ends as it should.
env = shim.env(P=2, gat=shim.path("to_end"))
with CoRunner(shim, env, 2, seconds=60):
    end = run("throttled to the end", env, 1200)
check.expect(max(n for _, n in end) == 1, f"throttled to the end: one root ({max(n for _, n in end)} most)")

# The user capped libomp's threads: a root could count against a team, so none.
env = shim.env(P=2, gat=shim.path("capped"), KMP_ALL_THREADS=64)
with CoRunner(shim, env, 2, seconds=60):
    capped = run("throttled, KMP_ALL_THREADS=64", env, 1200)
check.expect(max(n for _, n in capped) == 0, f"KMP_ALL_THREADS set: no root ({max(n for _, n in capped)} seen)")

run("APSHIM_P=8", shim.env(P=8, gat=shim.path("p8")), 600)
check.done()
