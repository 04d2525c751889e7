"""One oneTBB job alone on P = 4 (more than the 2 real cores: APSHIM_P) starts at P (it joins
at the width its runtime already runs; checked with no cycle measured), gives processors back
in its serial phases, and after each one explores from 1 back to P within
ceil(log_{1/eta} P) + 2 est_cycles, really running 4 threads. The bound counts cycles, so the test uses 20 ms cycles: on a loaded 2-core machine
waking TBB's workers can take longer than the default 5 ms, which says nothing about the
estimator."""
import math
import os
import sys

from apshim_test import Check, Shim, read_trace

build, prog = sys.argv[1], sys.argv[2]
shim = Shim(build)
check = Check("tbb.converge")
P = 4
trace = shim.path("trace.csv")
# 5 rounds of 2000 items x 200 us (0.4 s of work, 10+ cycles on 2 cores), 300 ms serial after each.
r = shim.run([prog, "5", "2000", "200", "300"], shim.env(P=P, trace=trace, est_cycle_ms=20), timeout=90)
check.expect(r.returncode == 0, "program exits 0")
rows = read_trace(trace) if os.path.exists(trace) else []
check.expect(bool(rows), "the job wrote its trace (the shim ran)")
bound = math.ceil(math.log(P) / math.log(1 / 0.5)) + 2
# A climb starts at the last cycle run on one processor before usage rises again; it ends at
# the first cycle run on P. The last serial phase ends the program: no climb after it.
climbs = []
for i in range(1, len(rows)):
    if rows[i - 1]["usage"] == 1 and rows[i]["usage"] > 1:
        end = next((j for j in range(i, len(rows)) if rows[j]["usage"] == P or rows[j]["usage"] == 1), None)
        reached = end is not None and rows[end]["usage"] == P
        ramp = [(row["desire"], row["allotment"], row["usage"], round(row["inefficiency"], 2)) for row in rows[i - 1:i + bound + 1]]
        climbs.append((reached, None if end is None else end - (i - 1), ramp))
check.expect(len(climbs) >= 3, f"serial phases bring usage to 1 and rounds raise it again ({len(climbs)} climbs, 4 expected)")
for k, (reached, cycles, ramp) in enumerate(climbs):
    check.expect(reached and cycles <= bound,
                 f"climb {k + 1}: usage 1 -> P={P} in {cycles} cycles <= {bound} "
                 f"((desire, allotment, usage, r) per cycle: {ramp})")
late = [int(l.split()[3]) for l in r.stderr.splitlines() if l.startswith("round")]
check.expect(late and all(m == P for m in late), f"every round runs on {P} threads at some point (saw {late})")
busy_rows = [row for row in rows if row["usage"] == P and row["busy"] > 1]
check.expect(busy_rows and sum(row["inefficiency"] for row in busy_rows) / len(busy_rows) < 0.2,
             "ample parallelism reads low inefficiency")
# The join itself, with no cycle measured during the run (10 s cycles, a table of its own): the
# job joins at P, so nothing throttles it and every round runs on P threads (joining at desire 1
# parked all but one worker at once). Measured first cycles are left out: on a loaded machine
# one may read idle and lower the desire, which is WSAP's business, not the join's.
r = shim.run([prog, "5", "2000", "200"], shim.env(P=P, gat=shim.path("steady.gat"), est_cycle_ms=10000), timeout=90)
rounds = [int(l.split()[3]) for l in r.stderr.splitlines() if l.startswith("round")]
check.expect(r.returncode == 0 and len(rounds) == 5 and all(m == P for m in rounds),
             f"with no cycle measured, every round runs on {P} threads (saw {rounds})")
check.done()
