"""NumPy with Debian's OpenMP build of OpenBLAS (libopenblas0-openmp, selected with
LD_LIBRARY_PATH as its docs say), plain LD_PRELOAD of the shim, nothing else preloaded: python
loads libgomp RTLD_LOCAL through numpy -> libblas.so.3 -> libopenblas. Several exact-integer
matrix products with ~300 ms pure-Python phases between them (numpy_work.py); alone, throttled
to allotment 1 by a co-runner, and at APSHIM_P=8 (realprog.py)."""
import os

from realprog import OPENBLAS_OPENMP, PYTHON, RealProgram, build_dir, library_path_first, require, work_lines

WORK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "numpy_work.py")
ARGS = ["1900", "4", "1500000"]  # about 3 s natively on 2 cores; 4 products, serial phases between


t = RealProgram("real.numpy_openblas", build_dir(), lambda tag: [PYTHON, WORK] + ARGS, work_lines,
                env={"LD_LIBRARY_PATH": library_path_first(OPENBLAS_OPENMP)})
require(t.check, PYTHON, os.path.join(OPENBLAS_OPENMP, "libopenblas.so.0"),
        "/usr/lib/python3/dist-packages/numpy/__init__.py")
m = t.native()
t.check.expect("openblas-openmp" in m.stderr and "libgomp" in m.stderr,
               "the OpenMP build of OpenBLAS and libgomp are the ones loaded (" + m.stderr.strip()[-200:] + ")")
t.alone()
t.throttled()
t.p8()
t.done()
