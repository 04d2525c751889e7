"""OpenCV (Debian python3-opencv, whose cv::parallel_for_ runs on oneTBB): image filters
(opencv_work.py) in a Python process, which loads libopencv_core and libtbb with RTLD_LOCAL;
alone, throttled to allotment 1 by a co-runner, and at APSHIM_P=8 (realprog.py): the same
checksum as natively, no hang, the allotment enforced."""
import os
import subprocess

from realprog import PYTHON, RealProgram, build_dir, require

WORK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "opencv_work.py")
ARGS = ["2"]  # two rounds of every filter: about 3 s natively on 2 cores


def output_of(tag, m):
    """What opencv_work.py printed, less the time."""
    return [line.split(" time_s=")[0] for line in m.stdout.splitlines()]


t = RealProgram("real.opencv", build_dir(), lambda tag: [PYTHON, WORK] + ARGS, output_of)
require(t.check, PYTHON)
# The test is about OpenCV on oneTBB: an OpenCV built with another parallel framework would prove nothing.
info = subprocess.run([PYTHON, "-c", "import cv2; print(cv2.getBuildInformation())"], capture_output=True, text=True)
framework = [line.split(":", 1)[1].strip() for line in info.stdout.splitlines() if "Parallel framework" in line]
print(f"OpenCV's parallel framework: {framework}", flush=True)
t.check.expect(info.returncode == 0 and framework and framework[0].startswith("TBB"),
               "python3-opencv is installed and runs on oneTBB (scripts/install-deps.sh)")
if t.check.failures:
    t.check.done()
t.all_modes()
