"""A program that links no OpenMP runtime loads an OpenMP plugin with dlopen(RTLD_LOCAL), as Python
loads an extension module (NumPy with OpenMP OpenBLAS): the runtime is outside the global scope,
so dlsym(RTLD_NEXT) finds none of its entry points behind the shim's (the shim called address 0:
SIGSEGV at the first parallel region). Same answer as without the shim, alone and throttled, and
the regions are measured (busy > 0 in the trace).
Usage: test_plugin.py BUILD HOST PLUGIN"""
import os
import sys

from apshim_test import Check, CoRunner, Shim, read_trace

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
check.done()
