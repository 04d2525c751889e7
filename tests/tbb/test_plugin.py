"""A program that links no oneTBB and dlopen()s a TBB plugin with RTLD_LOCAL (as Python loads
extension modules): the plugin's libtbb is not in the global scope, so the shim's interposed
TBB entry points must find it through its handle. Same answer as without the shim, tasks
measured, desire explored above 1. The first version of the adapter crashed here (SIGSEGV:
dlsym(RTLD_NEXT) found no libtbb behind the shim). And with a thread created before the plugin is
loaded: TBB's workers, created later, still get their slots (the shim looked for libtbb at that
first thread creation and found none; a version that remembered "no libtbb" measured the main
thread only: usage 1 in every cycle)."""
import os
import sys

from apshim_test import Check, Shim, read_trace

build, host, plugin = sys.argv[1], sys.argv[2], sys.argv[3]
shim = Shim(build)
check = Check("tbb.plugin")
argv = [host, plugin, "20", "2000", "20"]
native = shim.native(argv, timeout=60)
check.expect(native.returncode == 0, f"runs without the shim ({native.stdout.strip()})")
trace = shim.path("trace.csv")
env = shim.env(P=4, trace=trace)
r = shim.run(argv, env, timeout=60)
check.expect(r.returncode == 0 and r.stdout == native.stdout, f"same answer under the shim (rc {r.returncode})")
rows = read_trace(trace) if os.path.exists(trace) else []
check.expect(rows and max(row["busy"] for row in rows) > 0.9, "the plugin's tasks are measured (busy > 0.9 in some cycle)")
check.expect(rows and max(row["desire"] for row in rows) > 1, "the job explores above desire 1")
check.expect(rows and max(row["usage"] for row in rows) >= 2, "TBB's workers are measured (usage 2 in some cycle)")

trace2 = shim.path("trace-thread-first.csv")
r2 = shim.run(argv + ["thread-first"], shim.env(P=4, trace=trace2, gat=shim.path("gat2")), timeout=60)
check.expect(r2.returncode == 0 and r2.stdout == native.stdout, f"thread first: same answer (rc {r2.returncode})")
rows2 = read_trace(trace2) if os.path.exists(trace2) else []
check.expect(rows2 and max(row["usage"] for row in rows2) >= 2,
             f"thread first: TBB's workers are measured (usage {sorted({row['usage'] for row in rows2})})")
s = shim.status(env)
check.expect(s is not None and s["jobs"] == [], "the job's row is gone after exit")
check.done()
