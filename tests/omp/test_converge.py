"""One OpenMP job alone explores from 1 to P = 4 (above the 2 real cores: APSHIM_P) within
ceil(log_{1/eta} P) + 2 est_cycles, and its regions really get teams of 4."""
import math
import sys

from apshim_test import Check, Shim, read_trace

build, prog = sys.argv[1], sys.argv[2]
shim = Shim(build)
check = Check("omp.converge")
P = 4
trace = shim.path("trace.csv")
r = shim.run([prog, "60", "16", "2000"], shim.env(P=P, trace=trace), timeout=60)
check.expect(r.returncode == 0, "program exits 0")
rows = read_trace(trace)
first = next((i for i, row in enumerate(rows) if row["allotment"] == P), None)
bound = math.ceil(math.log(P, 2)) + 2
check.expect(first is not None and first + 1 <= bound, f"allotment reaches P={P} in cycle {None if first is None else first + 1} <= {bound}")
teams = [int(l.split()[3]) for l in r.stderr.splitlines() if l.startswith("round")]
check.expect(teams and teams.count(P) >= len(teams) // 2, f"most regions get teams of {P} ({teams})")
check.expect(teams and min(teams[:3]) <= 2, "the first regions start small (desire 1)")
check.done()
