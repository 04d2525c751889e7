"""scikit-learn (Debian python3-sklearn): gradient boosting, whose OpenMP loops (Cython prange,
libgomp loaded RTLD_LOCAL by python, teams sized by omp_get_max_threads()) are thousands of short
parallel regions a second (sklearn_work.py); alone, throttled to allotment 1 by a co-runner (also
with OMP_DYNAMIC=true, where the shim sizes its teams and libgomp's own rule stands aside:
adapters/omp/own_dynamic.cpp), and at APSHIM_P=8 (realprog.py): the same checksum as natively, no
hang, the allotment enforced."""
import os

from realprog import PYTHON, RealProgram, build_dir, require, work_lines

WORK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sklearn_work.py")
ARGS = ["40000", "100"]


t = RealProgram("real.sklearn_hgb", build_dir(), lambda tag: [PYTHON, WORK] + ARGS, work_lines)
require(t.check, PYTHON, "/usr/lib/python3/dist-packages/sklearn/__init__.py")
t.native()
t.alone()
t.throttled()
t.throttled("throttled, OMP_DYNAMIC=true", OMP_DYNAMIC="true")
t.p8()
t.done()
