"""scikit-learn as pip installs it (its wheel vendors its own libgomp, renamed
scikit_learn.libs/libgomp-<hash>.so.1.0.0) beside Debian's NumPy on OpenMP OpenBLAS (Debian's
libgomp.so.1): two copies of libgomp in one process, each extension module bound to its own.
A threaded matrix product (OpenBLAS), the gradient-boosting fit of sklearn_work.py (sklearn's
copy), the product again; prints the products' sums and sklearn_work.py's line. Under a shim
that sent every module's OpenMP calls to one copy, the fit's accuracy fell from 0.94 to 0.51.

    sklearn_pip_work.py SAMPLES ITERATIONS"""
import os
import runpy
import sys

import numpy as np

samples, iterations = sys.argv[1], sys.argv[2]
a = np.arange(600 * 600, dtype=np.float64).reshape(600, 600) % 7
print("blas", int((a @ a).sum()), flush=True)
sys.argv = ["sklearn_work.py", samples, iterations]
runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), "sklearn_work.py"), run_name="__main__")
print("blas", int((a @ a.T).sum()), flush=True)
