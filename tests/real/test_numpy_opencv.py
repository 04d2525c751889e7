"""NumPy on Debian's OpenMP OpenBLAS, then OpenCV on oneTBB, in one Python process
(numpy_opencv_work.py): libgomp starts the shim, and libtbb is loaded later (`import cv2`). Until
the eighty-eighth session the shim's exit hook was registered at the first runtime's start only,
so it ran after libtbb's static destructors; destroying its global_control then aborted the
program at exit ("pure virtual method called", rc 134) in every mode, alone included (found with
R's dada2, whose RcppParallel loads libtbb after libR started libgomp). Alone, throttled to
allotment 1 by a co-runner, and at APSHIM_P=8 (realprog.py): rc 0 and the native output."""
import glob
import os

from realprog import OPENBLAS_OPENMP, PYTHON, RealProgram, build_dir, library_path_first, require, work_lines

WORK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "numpy_opencv_work.py")
ARGS = ["1900", "3", "1000000", "2"]  # about 2 s natively on 2 cores: NumPy's products, then OpenCV's filters

t = RealProgram("real.numpy_opencv", build_dir(), lambda tag: [PYTHON, WORK] + ARGS, work_lines,
                env={"LD_LIBRARY_PATH": library_path_first(OPENBLAS_OPENMP)})
require(t.check, PYTHON, os.path.join(OPENBLAS_OPENMP, "libopenblas.so.0"),
        "/usr/lib/python3/dist-packages/numpy/__init__.py",
        next(iter(glob.glob("/usr/lib/python3/dist-packages/cv2*.so")), "python3-opencv's cv2 module"))
m = t.native()
t.check.expect("libgomp" in m.stderr and m.stdout.count("checksum=") == 2,
               "natively both parts ran, NumPy's on libgomp (" + m.stderr.strip()[-160:] + ")")
t.alone()
t.throttled()
t.p8()
t.done()
