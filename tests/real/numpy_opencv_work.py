"""One Python process that uses both runtimes one after the other, as scientific Python code
does: NumPy's matrix products on the OpenMP build of OpenBLAS (libgomp starts first), then
`import cv2` loads libopencv_core and libtbb, and OpenCV's filters run on oneTBB. The shim's exit
must come before libtbb's static destructors although libgomp started it (test_numpy_opencv.py).
Runs numpy_work.py, then opencv_work.py, in this process.

    numpy_opencv_work.py N ROUNDS SERIAL_ITERATIONS OPENCV_ROUNDS
"""
import os
import runpy
import sys

here = os.path.dirname(os.path.abspath(__file__))
n, rounds, serial, cv_rounds = sys.argv[1:5]
for script, args in (("numpy_work.py", [n, rounds, serial]), ("opencv_work.py", [cv_rounds])):
    path = os.path.join(here, script)
    sys.argv = [path] + args
    runpy.run_path(path, run_name="__main__")
