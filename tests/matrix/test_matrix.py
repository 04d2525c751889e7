"""The runtime version matrix: for each runtime version a user may have, the shim attaches
(measures: busy > 0.5 in some trace row), throttles (at allotment 1 the trace says it is confined
to 1 CPU and /proc says the process kept at most about one processor busy), and the output is the
same as without the shim on that runtime. A version that is not installed here is skipped with
one SKIP line saying how to get it (scripts/fetch-runtimes.sh, which scripts/test.sh runs).
A row whose library has a name of its own (the hashed libgomp of a wheel) also checks, from
/proc/PID/maps of the shim's run, that the program mapped that file and no other copy of the
runtime: otherwise the system's would answer and the row would prove nothing about it.
Throttled, `apshim status` must name the runtime the program really runs on (LABEL): gcc's program
on libomp under libgomp's name, as conda-forge's llvm-openmp installs it, ran right under the shim
but was listed as libgomp until the sixty-seventh session.
The native and alone runs do a tenth of the throttled run's work (SMALL_ARGS): they check that
the program runs on that runtime, with and without the shim, alike. The throttled run needs its
length for /proc's measure; its answer is checked against the program's native answer for the
same work, which the programs compute in integers whatever the runtime or the team (fib(44); a
checksum), so one native run per program serves every runtime's row.
Usage: test_matrix.py BUILD"""
import glob
import os
import sys
import threading
import time

from apshim_test import Check, CoRunner, Shim, cpus_used, job_of, pypi_libgomp_program, read_trace, usable_cpus, wait_for

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


def shadow_dir(folder, soname, target):
    """runtimes/FOLDER, where SONAME is a link to the library TARGET (None: none, and no folder):
    put first in LD_LIBRARY_PATH, it answers for that soname."""
    if not target:
        return None
    shadow = os.path.join(runtimes, folder)
    os.makedirs(shadow, exist_ok=True)
    link = os.path.join(shadow, soname)
    if not os.path.lexists(link):
        os.symlink(target, link)
    return shadow


def iomp_dir():
    """libiomp5 answers to libomp's soname through a link: clang's programs need libomp.so.5."""
    lib = wheel_lib("iomp-wheel", "libiomp5.so")
    return shadow_dir("iomp-as-libomp", "libomp.so.5", lib and os.path.join(lib, "libiomp5.so"))


def libomp_as_libgomp_dir():
    """A folder where libgomp.so.1 is a link to the system's libomp, as conda-forge's llvm-openmp
    (its _openmp_mutex) installs it: gcc's programs then run on libomp through its GOMP_* entry
    points. None where libomp is not installed."""
    found = sorted(glob.glob("/usr/lib/llvm-*/lib/libomp.so.5")) or sorted(glob.glob("/usr/lib/*/libomp.so.5"))
    return shadow_dir("libomp-as-libgomp", "libgomp.so.1", found[-1] if found else None)


def run_mapping(argv, env, timeout=120, interval=0.02):
    """Runs argv like Shim.run while reading its /proc/PID/maps every `interval` s; returns
    (returncode, stdout, every file path it was seen mapping)."""
    seen, done = set(), threading.Event()

    def watch(pid):
        while not done.is_set():
            try:
                with open(f"/proc/{pid}/maps") as f:
                    seen.update(fields[5] for fields in (line.split(None, 5) for line in f) if len(fields) == 6)
            except OSError:
                pass
            time.sleep(interval)

    p = shim.spawn(argv, env)
    watcher = threading.Thread(target=watch, args=(p.pid,))
    watcher.start()
    try:
        out, _ = p.communicate(timeout=timeout)
    finally:
        if p.poll() is None:  # timed out: do not leave it running
            p.kill()
            p.wait()
        done.set()
        watcher.join()
    return p.returncode, out, {path.strip() for path in seen}


gomp_hashed, gomp_hashed_lib, gomp_hashed_how = pypi_libgomp_program(build, omp_gcc)

# Long enough for /proc to tell how many processors the throttled run kept busy (cpus_used: half a
# second of samples after 0.3 s) on a fast machine: fib(42) and 3 x 10^7 iterations, throttled,
# took 0.62-0.68 s on this session's (fifty-first), and every row's measure came back empty.
# fib(44) once is 2.6 times fib(42)'s work: about 1.7 s throttled there, 3.5 s on the dev VM
# (twice, as until the fifty-sixth session, 7 s).
TBB_ARGS = [tbb_fib, "44", "14", "1"]
OMP_ARGS = ["3", "30000000"]
SMALL_ARGS = {tbb_fib: ["39", "14", "1"]}  # fib(39): a ninth of fib(44)'s work
SMALL_OMP_ARGS = ["3", "3000000"]

LIBOMP_AS_LIBGOMP = "libomp 14 under libgomp's name (gcc's program; conda-forge's llvm-openmp installs it so)"
ROWS = [
    # (name, program argv, LD_LIBRARY_PATH or "" for the system's, how to get it[, the file the
    #  runtime must be mapped from: no other file of the runtime's name stem may be mapped])
    ("oneTBB 2021.8 (Debian libtbb12)", TBB_ARGS, "", "apt-get install libtbb-dev"),
    ("oneTBB 2023.2 (PyPI tbb 2023.2.0 wheel, TCM served by the shim)", TBB_ARGS, wheel_lib("tbb-wheel", "libtbb.so.12"),
     "scripts/fetch-runtimes.sh"),
    ("libomp 14 (Debian libomp5-14)", [omp_clang, *OMP_ARGS], "", "apt-get install libomp-dev"),
    ("libomp 16 (Debian libomp5-16, unpacked)", [omp_clang, *OMP_ARGS],
     os.path.join(runtimes, "libomp16/usr/lib/llvm-16/lib") if glob.glob(os.path.join(runtimes, "libomp16/usr/lib/llvm-16/lib/libomp*.so.5")) else None,
     "scripts/fetch-runtimes.sh"),
    ("Intel libiomp5 (PyPI intel-openmp 2026.2.0 wheel)", [omp_clang, *OMP_ARGS], iomp_dir(),
     "scripts/fetch-runtimes.sh"),
    ("libgomp 12 (Debian gcc 12)", [omp_gcc, *OMP_ARGS], "", "apt-get install gcc"),
    ("libgomp under a hashed name (PyPI scikit-learn 1.9.1 wheel's scikit_learn.libs/libgomp-<hash>.so.1.0.0, "
     "vendored as PyTorch's wheels vendor theirs)", [gomp_hashed or "", *OMP_ARGS],
     gomp_hashed and os.path.dirname(gomp_hashed_lib), gomp_hashed_how, gomp_hashed_lib),
    (LIBOMP_AS_LIBGOMP, [omp_gcc, *OMP_ARGS], libomp_as_libgomp_dir(), "apt-get install libomp-dev",
     os.path.join(runtimes, "libomp-as-libgomp", "libgomp.so.1")),
]
# What `apshim status` names each row's runtime: by its program, but for the row whose libgomp is libomp.
LABEL = {tbb_fib: ["tbb"], omp_clang: ["libomp"], omp_gcc: ["libgomp"], gomp_hashed: ["libgomp"]}
ROW_LABEL = {LIBOMP_AS_LIBGOMP: ["libomp"]}

native_answers = {}  # (program, *args) -> its native stdout, run on the runtime of the row that first asked
COPY_OF = {gomp_hashed: omp_gcc}  # the same program, relinked: the same answer


def native_answer(argv, extra):
    key = (COPY_OF.get(argv[0], argv[0]), *argv[1:])
    if key not in native_answers:
        native = shim.run(argv, shim.env(preload=False, **extra), timeout=120)
        check.expect(native.returncode == 0 and native.stdout, f"{' '.join(argv)}: runs natively ({native.returncode})")
        native_answers[key] = native.stdout
    return native_answers[key]


for name, argv, libdir, how, *only in ROWS:
    if libdir is None or not os.path.exists(argv[0]):
        print(f"SKIP {name}: not installed here ({how})", flush=True)
        continue
    extra = {"LD_LIBRARY_PATH": libdir} if libdir else {}
    small = [argv[0], *SMALL_ARGS.get(argv[0], SMALL_OMP_ARGS)]
    native = shim.run(small, shim.env(preload=False, **extra), timeout=120)
    check.expect(native.returncode == 0, f"{name}: runs natively")
    trace = shim.path(f"{len(name)}-alone.csv")
    returncode, out, maps = run_mapping(small, shim.env(trace=trace, gat=shim.path(f"{len(name)}-alone"), **extra))
    rows = read_trace(trace) if os.path.exists(trace) else []
    check.expect(returncode == 0 and out == native.stdout, f"{name}: alone, the same output")
    if only:
        lib = os.path.realpath(only[0])
        stem = os.path.basename(lib).split("-")[0].split(".")[0]  # libgomp-e985bcbb.so.1.0.0: libgomp
        others = sorted(m for m in maps if os.path.basename(m).startswith(stem) and os.path.realpath(m) != lib)
        check.expect(lib in {os.path.realpath(m) for m in maps} and not others,
                     f"{name}: the shim's process mapped {lib} and no other {stem} ({others or 'none'})")
    check.expect(any(r["busy"] > 0.5 for r in rows), f"{name}: attached and measured (busy > 0.5 in some of {len(rows)} cycles)")
    if usable_cpus() < 2:
        continue
    answer = native_answer(argv, extra)
    trace = shim.path(f"{len(name)}-throttled.csv")
    env = shim.env(P=2, trace=trace, gat=shim.path(f"{len(name)}-throttled"), **extra)
    with CoRunner(shim, env, P=2):
        p = shim.spawn(argv, env)
        job = wait_for(lambda: (lambda j: j if j and j["runtimes"] else None)(job_of(shim.status(env), p.pid)), 10)
        used = cpus_used(p)
        out, err = p.communicate(timeout=120)
    rows = read_trace(trace) if os.path.exists(trace) else []
    check.expect(p.returncode == 0 and out == answer, f"{name}: throttled, the native answer")
    check.expect(any(r["cpus"] == 1 for r in rows), f"{name}: throttled, confined to 1 CPU")
    label = ROW_LABEL.get(name, LABEL.get(argv[0]))
    check.expect(job is not None and job["runtimes"] == label,
                 f"{name}: `apshim status` names its runtime {label} ({job and job['runtimes']})")
    check.expect(used is not None and used <= 1.15, f"{name}: throttled, {used and round(used, 2)} processors busy (<= 1.15)")
check.done()
