"""The allotment is enforced on any code shape, measured by the kernel: a program throttled to
allotment 1 (a stand-in co-runner holds the rest of a table of P = 2) keeps at most about one
processor busy (CPU seconds / wall seconds from /proc, not the shim's own counters), prints
exactly what it prints without the shim, and finishes.

Usage: test_enforce.py BUILD PROGRAM [ARG...]. Programs: one long OpenMP region of static loops
whose threads spin-wait for each other (omp_contract, the NPB EP / OpenBLAS shape no parking can
throttle), and recursive oneTBB tasks that wait for their children (tbb_fib)."""
import sys

from apshim_test import Check, CoRunner, Shim, cpus_used, job_of, require_two_cpus, wait_for

build, argv = sys.argv[1], sys.argv[2:]
shim = Shim(build)
check = Check("enforce")
require_two_cpus("confinement to 1 of them shows nothing")

native = shim.run(argv, shim.env(preload=False), timeout=120)
check.expect(native.returncode == 0, f"runs without the shim ({native.stderr.strip()[:200]})")
env = shim.env(P=2, trace=shim.path("trace.csv"))
with CoRunner(shim, env, P=2):
    p = shim.spawn(argv, env)
    # While it runs, `apshim status --json` tells why and where: the runtime attached, limited by
    # its fair share, on exactly as many processors as its allotment.
    seen = wait_for(lambda: (lambda j: j if j and j["runtimes"] and j["processors"] else None)(job_of(shim.status(env), p.pid)), 10)
    used = cpus_used(p)
    out, err = p.communicate(timeout=120)
check.expect(p.returncode == 0, f"throttled: exit 0 ({err.strip()[:300]})")
check.expect(out == native.stdout, "throttled: the same output as without the shim")
check.expect(seen is not None and seen["limited_by"] == "share" and len(seen["processors"]) == seen["allotment"] == 1
             and seen["threads_running"] >= 0,
             f"status says: runtimes {seen and seen['runtimes']}, limited by {seen and seen['limited_by']}, "
             f"processors {seen and seen['processors']}, threads running {seen and seen['threads_running']}")
check.expect(used is not None and used <= 1.15, f"throttled to allotment 1: {used and round(used, 2)} processors busy (<= 1.15)")
check.done()
