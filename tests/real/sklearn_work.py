"""scikit-learn workload for tests/real and bench: gradient boosting (HistGradientBoostingClassifier)
on made-up data. Its OpenMP loops (Cython prange, libgomp loaded RTLD_LOCAL by python) are
thousands of short parallel regions a second, sized by omp_get_max_threads(): the shape that
suffers most when co-running programs oversubscribe the cores (a waiting teammate spins while the
thread it waits for has no CPU).

    sklearn_work.py [SAMPLES] [ITERATIONS]

Deterministic for a given thread count (fixed seeds, no early stopping). The per-thread histograms
are summed in thread order, so the probabilities' last bits depend on the team's size; the
checksum covers the predicted classes and the probabilities rounded to 1e-6, which do not (the
bench's static split runs one thread). Prints a final `checksum=` line.
"""
import hashlib
import sys
import time

import numpy as np
from sklearn.datasets import make_classification
from sklearn.ensemble import HistGradientBoostingClassifier

samples = int(sys.argv[1]) if len(sys.argv) > 1 else 40000
iterations = int(sys.argv[2]) if len(sys.argv) > 2 else 150

start = time.monotonic()
X, y = make_classification(n_samples=samples, n_features=30, n_informative=12, random_state=20261125)
model = HistGradientBoostingClassifier(max_iter=iterations, early_stopping=False, random_state=0).fit(X, y)
proba = model.predict_proba(X)
digest = hashlib.sha256()
digest.update(memoryview(np.ascontiguousarray(proba.argmax(axis=1), dtype=np.int64)))
digest.update(memoryview(np.round(proba, 6)))
accuracy = float((proba.argmax(axis=1) == y).mean())
print(f"sklearn_work samples={samples} iterations={model.n_iter_} accuracy={accuracy:.4f} "
      f"checksum={digest.hexdigest()[:16]} time_s={time.monotonic() - start:.3f}")
