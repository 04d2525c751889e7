"""One OpenMP job alone on P = 4 (above the 2 real cores: APSHIM_P) starts at P (it joins at the
width of its first team: checked with no cycle measured, since a first cycle may read idle on a
loaded machine), climbs back to P within ceil(log_{1/eta} P) + 2 est_cycles whenever a
cycle read idle and restarted the exploration from desire 1, and its regions really get teams of 4
(OMP_NUM_THREADS=4: teams have exactly omp_get_max_threads() threads, which the shim never changes)."""

import math
import sys

from apshim_test import Check, Shim, read_trace

build, prog = sys.argv[1], sys.argv[2]
shim = Shim(build)
check = Check("omp.converge")
P = 4
# eta 0.25 (not the default 0.5): the job keeps wanting P while up to 75% of its time is idle,
# so a loaded test machine (threads waiting at barriers for descheduled teammates) does not
# make it shrink; the climb bound below uses the same eta.
ETA = 0.25
trace = shim.path("trace.csv")
r = shim.run([prog, "60", "16", "2000"], shim.env(P=P, trace=trace, eta=ETA, OMP_NUM_THREADS=P), timeout=60)
check.expect(r.returncode == 0, "program exits 0")
rows = read_trace(trace)
bound = math.ceil(math.log(P, 1 / ETA)) + 2
# WSAP reacts to single cycles: a cycle that falls on a region boundary (the team joining, the
# next one forming) can read mostly idle and restart the exploration from desire 1. Each climb,
# from such a restart to allotment P, must take at most the bound (restarts too close to the
# end of the trace to finish are not judged). On a quiet machine there may be none.
restarts = [i for i, row in enumerate(rows) if row["desire"] == 1 and i + bound < len(rows)]
for i in restarts:
    end = next((j for j in range(i, len(rows)) if rows[j]["allotment"] == P), None)
    check.expect(end is not None and end - i <= bound,
                 f"after the restart at cycle {i} the allotment climbs from 1 to P={P} in "
                 f"{None if end is None else end - i} cycles <= {bound}")
check.expect(rows and sum(row["allotment"] == P for row in rows) >= len(rows) * 3 // 4,
             f"the allotment is P={P} in most cycles ({sum(row['allotment'] == P for row in rows)} of {len(rows)})")
teams = [int(l.split()[3]) for l in r.stderr.splitlines() if l.startswith("round")]
check.expect(teams and teams.count(P) >= len(teams) // 2, f"most regions get teams of {P} ({teams})")
# The first region forks before the first allotment and gets P (so a program made of one long
# region starts wide and parks down), and the job joins the table at that width.
check.expect(teams and teams[0] == P, f"the first region, forked before any allotment, gets P ({teams[:3]})")
# Nothing but a measurement changes team sizes: with no est_cycle during the run (10 s cycles),
# every region gets the first one's team, before and after the job joined the table (programs
# count on two regions in a row having the same team: LLVM's kmp_set_defaults_lock_bug).
r = shim.run([prog, "100", "4", "100", "1"], shim.env(P=P, gat=shim.path("steady.gat"), est_cycle_ms=10000, OMP_NUM_THREADS=P), timeout=60)
teams = [int(l.split()[3]) for l in r.stderr.splitlines() if l.startswith("round")]
check.expect(r.returncode == 0 and len(teams) == 100 and set(teams) == {P},
             f"with no cycle measured, all 100 regions get teams of {P} ({sorted(set(teams))})")
check.done()
