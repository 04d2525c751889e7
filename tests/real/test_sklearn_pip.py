"""scikit-learn from PyPI (scripts/fetch-runtimes.sh: its wheel's own libgomp) beside Debian's
NumPy on OpenMP OpenBLAS (Debian's libgomp): two copies of libgomp in one process
(sklearn_pip_work.py). The shim must call each module's own copy: the same output as natively
alone, throttled to allotment 1 and at APSHIM_P=8 (realprog.py), and say once on stderr that it
does not adapt two copies."""
import os
import sys

from realprog import OPENBLAS_OPENMP, PYTHON, RealProgram, build_dir, library_path_first, require, work_lines

WORK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sklearn_pip_work.py")
ARGS = ["40000", "100"]
build = build_dir()
wheel = os.path.join(build, "runtimes", "sklearn-pip-wheel")

t = RealProgram("real.sklearn_pip", build, lambda tag: [PYTHON, WORK] + ARGS, work_lines,
                env={"LD_LIBRARY_PATH": library_path_first(OPENBLAS_OPENMP), "PYTHONPATH": wheel})
if not os.path.exists(os.path.join(wheel, "sklearn", "__init__.py")):
    print(f"SKIP real.sklearn_pip: no {wheel} (scripts/fetch-runtimes.sh could not fetch it: offline?)", flush=True)
    sys.exit(77)
require(t.check, PYTHON, os.path.join(OPENBLAS_OPENMP, "libopenblas.so.0"))
t.native()
m = t.alone()
copies = [line for line in m.stderr.splitlines() if "two copies of libgomp" in line]
t.check.expect(len(copies) == 1 and "libgomp-" in copies[0],
               f"alone: the shim said once that two copies of libgomp are loaded ({copies})")
t.throttled()
t.p8()
t.done()
