"""One oneTBB job alone with ample parallelism explores from 1 to P = 4 (more than the 2 real
cores: APSHIM_P) within ceil(log_{1/eta} P) + 2 est_cycles, and really runs 4 threads.
The bound counts cycles, so the test uses 20 ms cycles: on a loaded 2-core machine waking TBB's
workers can take longer than the default 5 ms, which says nothing about the estimator."""
import math
import os
import sys

from apshim_test import Check, Shim, read_trace

build, prog = sys.argv[1], sys.argv[2]
shim = Shim(build)
check = Check("tbb.converge")
P = 4
trace = shim.path("trace.csv")
r = shim.run([prog, "30", "400", "200"], shim.env(P=P, trace=trace, est_cycle_ms=20), timeout=60)
check.expect(r.returncode == 0, "program exits 0")
rows = read_trace(trace) if os.path.exists(trace) else []
check.expect(bool(rows), "the job wrote its trace (the shim ran)")
first = next((i for i, row in enumerate(rows) if row["usage"] == P), None)
bound = math.ceil(math.log(P) / math.log(1 / 0.5)) + 2
ramp = [(row["desire"], row["allotment"], row["usage"], round(row["inefficiency"], 2)) for row in rows[:bound + 2]]
check.expect(first is not None and first + 1 <= bound,
             f"usage reaches P={P} in cycle {None if first is None else first + 1} <= {bound} "
             f"((desire, allotment, usage, r) per cycle: {ramp})")
check.expect(rows and rows[0]["allotment"] <= 2, "the job starts small (desire 1, Sen §6.2)")
late = [int(l.split()[3]) for l in r.stderr.splitlines() if l.startswith("round")][10:]
check.expect(late and max(late) == P, f"later rounds run on {P} threads (saw {late})")
busy_rows = [row for row in rows[first or 0:] if row["usage"] == P]
check.expect(busy_rows and sum(row["inefficiency"] for row in busy_rows) / len(busy_rows) < 0.2,
             "ample parallelism reads low inefficiency")
check.done()
