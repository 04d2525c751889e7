"""OpenCV workload for tests/real and bench: image filters on a made-up picture. Debian's OpenCV
runs cv::parallel_for_ on oneTBB (libopencv_core links libtbb), and Python loads both with
RTLD_LOCAL (the cv2 extension module): a oneTBB program the shim reaches only through
dlopen(RTLD_NOLOAD). Every filter is one parallel_for over image rows; the checksum covers every
result, which does not depend on the thread count (each row is computed by one thread). Most of
the run is parallel: the edge-preserving smoothing is bilateralFilter, not filter2D, which
Debian's build runs on one thread (there a third of the run was serial, and the second thread
did 17% of the CPU work), and the results are hashed in place, not copied first.

    opencv_work.py [ROUNDS] [THREADS]

THREADS (optional): cv2.setNumThreads, OpenCV's own knob (bench's static split). Prints a final
`checksum=` line.
"""
import hashlib
import sys
import time

import cv2
import numpy as np

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 12
if len(sys.argv) > 2:
    cv2.setNumThreads(int(sys.argv[2]))

start = time.monotonic()
rng = np.random.default_rng(20261125)
image = rng.integers(0, 256, (2000, 2400, 3), dtype=np.uint8)
digest = hashlib.sha256()
for i in range(rounds):
    blurred = cv2.GaussianBlur(image, (0, 0), 3 + i % 3)
    larger = cv2.resize(blurred, None, fx=1.5, fy=1.5, interpolation=cv2.INTER_CUBIC)
    hsv = cv2.cvtColor(larger, cv2.COLOR_BGR2HSV)
    edges = cv2.Canny(cv2.cvtColor(larger, cv2.COLOR_BGR2GRAY), 50, 150)
    smoothed = cv2.bilateralFilter(hsv, 9, 50, 50)
    for result in (blurred, larger, hsv, edges, smoothed):
        digest.update(memoryview(result))                    # C-contiguous: hashed without a copy
print(f"opencv_work rounds={rounds} checksum={digest.hexdigest()[:16]} time_s={time.monotonic() - start:.3f}")
