"""SciPy with Debian's OpenMP build of OpenBLAS (libopenblas0-openmp, selected with LD_LIBRARY_PATH
as for NumPy): LU, Cholesky, eigenvalues, SVD, QR, products, a matrix exponential and an FFT
convolution (scipy_work.py), many of them short parallel regions of a team that meets at each
one's end. Alone, throttled to allotment 1 by a co-runner (also with OMP_DYNAMIC=true, which
OpenBLAS's teams must not follow), at APSHIM_P=8 (realprog.py), and alone
in its table beside a CPU hog outside it: natively there it took 67-81 s on 2 cores (1.9 s with
one thread), under the shim 90-108 s until the width check counted the idle processor the job runs
on as its width (docs/enforcement.md, thirty-fifth session), 2.8-4.1 s since. Beside the hog the
trace must show the width check narrowing the job (it gets further on one CPU of its own)."""
import os

from apshim_test import phases_in_order
from realprog import OPENBLAS_OPENMP, PYTHON, RealProgram, build_dir, library_path_first, require, work_lines

WORK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scipy_work.py")
ARGS = ["1100"]  # about 3 s natively on 2 cores (scipy_work.py's default 1300: 5 s)


t = RealProgram("real.scipy_openblas", build_dir(), lambda tag: [PYTHON, WORK] + ARGS, work_lines,
                env={"LD_LIBRARY_PATH": library_path_first(OPENBLAS_OPENMP)})
require(t.check, PYTHON, os.path.join(OPENBLAS_OPENMP, "libopenblas.so.0"),
        "/usr/lib/python3/dist-packages/scipy/__init__.py")
t.native()
t.alone()
t.throttled()
t.p8()
# OpenBLAS splits each call for omp_get_max_threads() threads and waits for every piece: with
# OMP_DYNAMIC=true at allotment 1 the shim gave it a team of one, which waited for ever (a 25 s
# time-out here), until the shim kept whole the teams of regions forked from OpenBLAS
# (adapters/omp/whole_team.hpp, thirty-sixth session).
t.throttled("throttled, OMP_DYNAMIC=true", OMP_DYNAMIC="true")
m, rows = t.beside_hog()
phases = phases_in_order(rows, "width_check")
t.check.expect("narrowed" in phases, f"beside a hog: the width check narrowed the job (phases in order {phases[:12]})")
t.done()
