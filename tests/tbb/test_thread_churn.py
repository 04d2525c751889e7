"""A long-running program whose application threads come and go: 1100 threads, one after
another, each run a little TBB work and end (more than the 1024 counter slots per runtime), then
threads that each spin inside a task_arena(1) of their own, so that only their own slot can see
the work. Slots of exited threads are given back and reused, so the shim still measures the
late threads' work; before, threads past the 1024th ever seen had no slot and the trace showed
busy = 0 for the whole second phase."""
import sys

from apshim_test import Check, Shim, read_trace

build, prog = sys.argv[1], sys.argv[2]
shim = Shim(build)
check = Check("tbb.thread_churn")
args = [prog, "churn", "1100", "250", "6"]
native = shim.native(args, timeout=120)
check.expect(native.returncode == 0, "runs without the shim")
trace = shim.path("trace.csv")
r = shim.run(args, shim.env(P=2, trace=trace), timeout=120)
check.expect(r.returncode == 0, f"exit 0 under the shim (rc {r.returncode}, stderr: {r.stderr.strip()[-300:]})")
rows = read_trace(trace)
# The last 0.6 s of the run belong to the spinning threads (250 x 6 ms = 1.5 s in all).
end = rows[-1]["time_ms"] if rows else 0
late = [row for row in rows if row["time_ms"] >= end - 600]
measured = [row for row in late if row["busy"] > 0.3]
check.expect(len(late) >= 50, f"the trace covers the end of the run ({len(late)} rows in its last 0.6 s)")
check.expect(len(measured) >= 0.7 * len(late),
             f"threads started after 1100 others ended are measured: busy > 0.3 in {len(measured)} of {len(late)} late cycles")
check.expect("not measured" not in r.stderr, "no slot shortage reported: " + r.stderr.strip()[-200:])
check.done()
