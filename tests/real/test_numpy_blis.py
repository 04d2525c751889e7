"""NumPy with Debian's OpenMP build of BLIS (libblis4-openmp; its BLAS in blis-openmp/libblas.so.3,
a whole copy of BLIS, selected with LD_LIBRARY_PATH), in a program that allows smaller teams
(OMP_DYNAMIC=true) and asks for 4 threads on 2 CPUs. BLIS forks num_threads(4) for every product
and aborts the program in a team of any other size but one ("A different number of threads was
created than was requested"): under the shim at allotment 2 it got teams of 2 and died of SIGABRT,
as it does natively whenever libgomp's load-average rule gives it 2 (adapters/omp/whole_team.hpp,
thirty-seventh session). The native reference runs with 2 threads (BLIS's default is one; it
reads OMP_NUM_THREADS) and dynamic adjustment off (the products are exact integers: the same at any
team size); then alone, throttled to allotment 1 and at APSHIM_P=8 (realprog.py) with
OMP_DYNAMIC=true and 4 threads asked; and throttled with dynamic adjustment off and 2 threads, where
the trace must read `spinning` (forty-second session)."""
import os

from realprog import BLIS_OPENMP, PYTHON, RealProgram, build_dir, library_path_first, require, work_lines

WORK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "numpy_work.py")
ARGS = ["1200", "4", "600000"]


t = RealProgram("real.numpy_blis", build_dir(), lambda tag: [PYTHON, WORK] + ARGS, work_lines,
                env={"OMP_NUM_THREADS": "2", "LD_LIBRARY_PATH": library_path_first(BLIS_OPENMP)})
require(t.check, PYTHON, os.path.join(BLIS_OPENMP, "libblas.so.3"), "/usr/lib/python3/dist-packages/numpy/__init__.py")
m = t.native()
t.check.expect("blis-openmp" in m.stderr and "libgomp" in m.stderr,
               "the OpenMP build of BLIS and libgomp are the ones loaded (" + m.stderr.strip()[-200:] + ")")
t.alone("alone, OMP_DYNAMIC=true, 4 threads", OMP_DYNAMIC="true", OMP_NUM_THREADS="4")
t.throttled("throttled, OMP_DYNAMIC=true, 4 threads", OMP_DYNAMIC="true", OMP_NUM_THREADS="4")
# Dynamic adjustment off: BLIS keeps its promised team of 2, whose threads meet in spin-waits without
# a yield; the shim leaves it unconfined while its regions run (whole_team.hpp, spins_at_meetings),
# where confined each product took 4x its one-thread time. The trace must say so.
t.throttled("throttled, 2 threads", max_cpus=None)
t.check.expect(any(r["confine_check"] == "spinning" for r in t.last_rows),
               "throttled, 2 threads: the trace reads `spinning` (BLIS's team left unconfined while it runs)")
t.p8("P8, OMP_DYNAMIC=true, 4 threads", OMP_DYNAMIC="true", OMP_NUM_THREADS="4")
t.done()
