"""SciPy workload for tests/real and bench: LAPACK and BLAS through SciPy (LU, Cholesky, symmetric
eigenvalues, SVD, QR, products, a matrix exponential) and an FFT convolution. Debian's OpenMP build
of OpenBLAS (LD_LIBRARY_PATH, as for numpy_work.py) runs most of it as many short parallel regions
of a team that meets at each one's end, the shape that suffers most when a CPU of the team is
busy with another program: beside one CPU hog, 67-81 s natively on 2 cores, 1.9 s with one thread
(docs/enforcement.md, thirty-fifth session).

    scipy_work.py [N]

Fixed seeds. Prints one line per result, each rounded to 8 significant digits (the same with one
thread and two on Debian 12's OpenBLAS 0.3.21), and a final `scipy_work ... checksum=` line.
"""
import hashlib
import sys
import time

import numpy as np
import scipy.linalg as la
import scipy.signal as sg

n = int(sys.argv[1]) if len(sys.argv) > 1 else 1300
start = time.monotonic()
rng = np.random.default_rng(7)
A = rng.standard_normal((n, n))
B = rng.standard_normal((n, n))
out = []
lu, piv = la.lu_factor(A)
out.append(np.abs(la.lu_solve((lu, piv), B[:, : n * 4 // 13])).sum())
S = A.T @ A / n + np.eye(n)
w = la.eigh(S, eigvals_only=True)
out += [w.sum(), w.max()]
out.append(np.abs(la.cho_solve(la.cho_factor(S), B[:, : n * 2 // 13])).sum())
out.append(la.svd(A[:, : n * 9 // 13], compute_uv=False).sum())
out.append(np.abs(la.qr(A[:, : n * 8 // 13], mode="economic")[1]).sum())
C = A @ B
for _ in range(4):
    C = (C @ B) / np.sqrt(n) / 30
out.append(C.sum())
out.append(la.expm(A[: n * 4 // 13, : n * 4 // 13] / 40).sum())
img = rng.standard_normal((n * 15 // 13, n * 15 // 13))
out.append(np.abs(sg.fftconvolve(img, rng.standard_normal((61, 61)), mode="same")).sum())
lines = ["%.8e" % v for v in out]
print("\n".join(lines))
digest = hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16]
print(f"scipy_work n={n} checksum={digest} time_s={time.monotonic() - start:.3f}")
