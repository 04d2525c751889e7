"""A program that links no OpenMP runtime loads an OpenMP plugin with dlopen(RTLD_LOCAL), as Python
loads an extension module (NumPy with OpenMP OpenBLAS): the runtime is outside the global scope,
so dlsym(RTLD_NEXT) finds none of its entry points behind the shim's (the shim called address 0:
SIGSEGV at the first parallel region). Same answer as without the shim, alone and throttled, and
the regions are measured (busy > 0 in the trace). And where the user binds threads
(OMP_PROC_BIND=close), the runtime the plugin loads binds its threads itself: the shim, which
confines the host until then (it links no OpenMP runtime, so the variable binds nothing there yet:
shim/confine.hpp, binding_asked), stops, says why, and leaves each thread on the CPU its runtime
bound it to.
Usage: test_plugin.py BUILD HOST PLUGIN"""
import os
import sys

from apshim_test import Check, CoRunner, Shim, mask_looks, one_cpu, read_trace

build, host, plugin = sys.argv[1], sys.argv[2], sys.argv[3]
shim = Shim(build)
check = Check("omp.plugin")
argv = [host, plugin, "20", "200", "200"]
native = shim.native(argv, timeout=60)
check.expect(native.returncode == 0, f"runs without the shim ({native.stdout.strip()} {native.stderr.strip()[:200]})")
trace = shim.path("trace.csv")
r = shim.run(argv, shim.env(trace=trace), timeout=60)
check.expect(r.returncode == 0 and r.stdout == native.stdout, f"alone: same answer under the shim (rc {r.returncode}, {r.stderr.strip()[:200]})")
rows = read_trace(trace) if os.path.exists(trace) else []
check.expect(rows and max(row["busy"] for row in rows) > 0.5, "the plugin's regions are measured (busy > 0.5 in some cycle)")
env = shim.env(P=2, gat=shim.path("throttled"))
with CoRunner(shim, env, P=2):
    r = shim.run(argv, env, timeout=60)
check.expect(r.returncode == 0 and r.stdout == native.stdout, f"throttled: same answer (rc {r.returncode})")
bound = [host, plugin, "10", "1000", "200"]  # about 1 s natively: the masks are read every 50 ms
native = shim.native(bound, timeout=60, OMP_PROC_BIND="close")
check.expect(native.returncode == 0, f"bound: runs without the shim ({native.stderr.strip()[:200]})")
env = shim.env(P=2, gat=shim.path("bound"), APSHIM_LOG="info", OMP_PROC_BIND="close")
with CoRunner(shim, env, P=2):
    p = shim.spawn(bound, env)
    looks = mask_looks(p)
    out, err = p.communicate(timeout=120)
check.expect(p.returncode == 0 and out == native.stdout, f"bound, throttled: same answer (rc {p.returncode})")
check.expect("OMP_PROC_BIND is set" in err, f"bound: the shim says the user's binding keeps it from confining ({err.strip()[:300]})")
# The runtime put its two threads on two CPUs, where confinement at allotment 1 would have put both
# on one. (A sanitizer's own thread, which no runtime binds, keeps the whole mask.)
spread = [look for look in looks if len({m for m in look.values() if one_cpu(m)}) >= 2]
check.expect(len(spread) >= len(looks) // 2 > 0,
             f"bound: the threads on the CPUs their runtime bound them to in most looks ({len(spread)} of {len(looks)}; "
             f"the last: {looks[-1:]})")
check.done()
