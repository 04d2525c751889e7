"""One pthread's omp_set_num_threads(1) does not cap another pthread's teams (OpenMP's ICVs are
per thread; the shim once kept the last omp_set_num_threads of any thread as a process-wide bound,
so B's default teams got 1 thread where sizing at forks was allowed). Alone, with
APSHIM_SHRINK_TEAMS=1 (teams sized at forks) and with the default (promised sizes).
Usage: test_icv.py BUILD OMP_ICV"""
import re
import sys

from apshim_test import Check, Shim

build, prog = sys.argv[1], sys.argv[2]
shim = Shim(build)
check = Check("omp.icv")


def teams(stderr):
    a = re.search(r"A team (\d+)", stderr)
    b = re.search(r"B team (\d+) max (\d+)", stderr)
    return (int(a.group(1)) if a else None, int(b.group(1)) if b else None, int(b.group(2)) if b else None)


native = shim.native([prog], timeout=60)
na, nb, nmax = teams(native.stderr)
check.expect(native.returncode == 0 and na == 1 and nb == nmax, f"natively A gets 1, B its own default ({na}, {nb}, max {nmax})")
for name, extra in (("default", {}), ("APSHIM_SHRINK_TEAMS=1", {"APSHIM_SHRINK_TEAMS": "1"})):
    # 10 s cycles: no measurement during the run, so the allotment stays what the join gave (P,
    # alone) and only the ICVs decide B's team.
    r = shim.run([prog], shim.env(P=nmax, gat=shim.path(name), est_cycle_ms=10000, **extra), timeout=60)
    a, b, mx = teams(r.stderr)
    check.expect(r.returncode == 0 and a == 1 and b == nb and mx == nmax,
                 f"{name}: A gets 1, B keeps its own {nb} ({a}, {b}, max {mx})")
check.done()
