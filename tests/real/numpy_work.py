"""NumPy workload for tests/real and bench: matrix products (OpenBLAS GEMM, parallel with OpenMP
when the openblas-openmp build is loaded) separated by ~300 ms pure-Python serial phases.

    numpy_work.py [N] [ROUNDS] [SERIAL_ITERATIONS]

Every matrix holds small integers, so every product is exact in float32 and float64 whatever
the thread count or summation order: the printed checksums are the same natively, under the
shim, and at any team size. Prints one line per round and a final `checksum=` line; the BLAS
and OpenMP libraries actually mapped go to stderr (the tests check the OpenMP build is used).
"""
import hashlib
import sys
import time

import numpy as np

n = int(sys.argv[1]) if len(sys.argv) > 1 else 2800
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 6
serial_iterations = int(sys.argv[3]) if len(sys.argv) > 3 else 4_000_000

start = time.monotonic()
rng = np.random.default_rng(20261123)
a = rng.integers(0, 8, size=(n, n)).astype(np.float64)
b = rng.integers(0, 8, size=(n, n)).astype(np.float64)
a32, b32 = a.astype(np.float32), b.astype(np.float32)
products = [lambda: a @ b, lambda: a @ b.T, lambda: a32 @ b32,   # dgemm NN, NT; sgemm (sums < 2^24)
            lambda: b.T @ a, lambda: b @ a, lambda: b32 @ a32.T]
digest = hashlib.sha256()
serial = 0
for r in range(rounds):
    c = products[r % len(products)]()
    digest.update(memoryview(c))                             # C-contiguous result: no copy
    for i in range(serial_iterations):                       # serial phase: one thread, ~300 ms
        serial = (serial * 31 + i) % 1_000_003
    print(f"round {r} {c.dtype} sum={int(c.sum(dtype=np.float64))} trace={int(np.trace(c))} serial={serial}", flush=True)
with open("/proc/self/maps") as f:
    libs = sorted({line.split()[-1] for line in f if "blas" in line or "gomp" in line or "omp.so" in line})
print("libraries: " + " ".join(libs), file=sys.stderr)
print(f"numpy_work n={n} rounds={rounds} checksum={digest.hexdigest()[:16]} time_s={time.monotonic() - start:.3f}")
