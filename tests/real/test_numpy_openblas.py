"""NumPy with Debian's OpenMP build of OpenBLAS (libopenblas0-openmp, selected with
LD_LIBRARY_PATH as its docs say), plain LD_PRELOAD of the shim, nothing else preloaded: python
loads libgomp RTLD_LOCAL through numpy -> libblas.so.3 -> libopenblas. Several exact-integer
matrix products with ~300 ms pure-Python phases between them (numpy_work.py); alone, throttled
to allotment 1 by a co-runner, and at APSHIM_P=8 (realprog.py)."""
import os

from realprog import RealProgram, build_dir, require

OPENBLAS_OPENMP = "/usr/lib/x86_64-linux-gnu/openblas-openmp"
PYTHON = "/usr/bin/python3"
WORK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "numpy_work.py")
ARGS = ["2000", "6", "4000000"]


def output_of(tag, m):
    """Every line numpy_work.py printed, less the time on the last one."""
    return [line.split(" time_s=")[0] for line in m.stdout.splitlines()]


t = RealProgram("real.numpy_openblas", build_dir(), lambda tag: [PYTHON, WORK] + ARGS, output_of,
                env={"LD_LIBRARY_PATH": OPENBLAS_OPENMP + (":" + os.environ["LD_LIBRARY_PATH"]
                                                            if os.environ.get("LD_LIBRARY_PATH") else "")})
require(t.check, PYTHON, os.path.join(OPENBLAS_OPENMP, "libopenblas.so.0"),
        "/usr/lib/python3/dist-packages/numpy/__init__.py")
m = t.native()
t.check.expect("openblas-openmp" in m.stderr and "libgomp" in m.stderr,
               "the OpenMP build of OpenBLAS and libgomp are the ones loaded (" + m.stderr.strip()[-200:] + ")")
t.alone()
t.throttled()
t.p8()
t.done()
