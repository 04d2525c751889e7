"""The runtime version matrix: for each runtime version a user may have, the shim attaches
(measures: busy > 0.5 in some trace row), throttles (at allotment 1 the trace says it is confined
to 1 CPU and /proc says the process kept at most about one processor busy), and the output is the
same as without the shim on that runtime. A version that is not installed here is skipped with
one SKIP line saying how to get it (scripts/fetch-runtimes.sh, which scripts/test.sh runs).
Usage: test_matrix.py BUILD"""
import glob
import os
import sys

from apshim_test import Check, CoRunner, Shim, cpus_used, read_trace, usable_cpus

build = sys.argv[1]
shim = Shim(build)
check = Check("matrix")
runtimes = os.path.join(build, "runtimes")
tbb_fib = os.path.join(build, "tests", "tbb", "tbb_fib")
omp_clang = os.path.join(build, "tests", "omp", "omp_contract_clang")
omp_gcc = os.path.join(build, "tests", "omp", "omp_contract_gcc")


def wheel_lib(dirname, filename):
    hits = glob.glob(os.path.join(runtimes, dirname, "*.data", "data", "lib", filename))
    return os.path.dirname(hits[0]) if hits else None


def iomp_dir():
    """libiomp5 answers to libomp's soname through a link: clang's programs need libomp.so.5."""
    lib = wheel_lib("iomp-wheel", "libiomp5.so")
    if not lib:
        return None
    shadow = os.path.join(runtimes, "iomp-as-libomp")
    os.makedirs(shadow, exist_ok=True)
    link = os.path.join(shadow, "libomp.so.5")
    if not os.path.exists(link):
        os.symlink(os.path.join(lib, "libiomp5.so"), link)
    return shadow


ROWS = [
    # (name, program argv, LD_LIBRARY_PATH or "" for the system's, how to get it)
    ("oneTBB 2021.8 (Debian libtbb12)", [tbb_fib, "41", "14", "4"], "", "apt-get install libtbb-dev"),
    ("oneTBB 2022.2 (PyPI tbb 2023.2.0 wheel)", [tbb_fib, "41", "14", "4"], wheel_lib("tbb-wheel", "libtbb.so.12"),
     "scripts/fetch-runtimes.sh"),
    ("libomp 14 (Debian libomp5-14)", [omp_clang, "3", "20000000"], "", "apt-get install libomp-dev"),
    ("libomp 16 (Debian libomp5-16, unpacked)", [omp_clang, "3", "20000000"],
     os.path.join(runtimes, "libomp16/usr/lib/llvm-16/lib") if glob.glob(os.path.join(runtimes, "libomp16/usr/lib/llvm-16/lib/libomp*.so.5")) else None,
     "scripts/fetch-runtimes.sh"),
    ("Intel libiomp5 (PyPI intel-openmp 2026.2.0 wheel)", [omp_clang, "3", "20000000"], iomp_dir(),
     "scripts/fetch-runtimes.sh"),
    ("libgomp 12 (Debian gcc 12)", [omp_gcc, "3", "20000000"], "", "apt-get install gcc"),
]

for name, argv, libdir, how in ROWS:
    if libdir is None or not os.path.exists(argv[0]):
        print(f"SKIP {name}: not installed here ({how})", flush=True)
        continue
    extra = {"LD_LIBRARY_PATH": libdir} if libdir else {}
    native = shim.run(argv, shim.env(preload=False, **extra), timeout=120)
    check.expect(native.returncode == 0, f"{name}: runs natively")
    trace = shim.path(f"{len(name)}-alone.csv")
    alone = shim.run(argv, shim.env(trace=trace, gat=shim.path(f"{len(name)}-alone"), **extra), timeout=120)
    rows = read_trace(trace) if os.path.exists(trace) else []
    check.expect(alone.returncode == 0 and alone.stdout == native.stdout, f"{name}: alone, the same output")
    check.expect(any(r["busy"] > 0.5 for r in rows), f"{name}: attached and measured (busy > 0.5 in some of {len(rows)} cycles)")
    if usable_cpus() < 2:
        continue
    trace = shim.path(f"{len(name)}-throttled.csv")
    env = shim.env(P=2, trace=trace, gat=shim.path(f"{len(name)}-throttled"), **extra)
    with CoRunner(shim, env, P=2):
        p = shim.spawn(argv, env)
        used = cpus_used(p)
        out, err = p.communicate(timeout=120)
    rows = read_trace(trace) if os.path.exists(trace) else []
    check.expect(p.returncode == 0 and out == native.stdout, f"{name}: throttled, the same output")
    check.expect(any(r["cpus"] == 1 for r in rows), f"{name}: throttled, confined to 1 CPU")
    check.expect(used is not None and used <= 1.15, f"{name}: throttled, {used and round(used, 2)} processors busy (<= 1.15)")
check.done()
