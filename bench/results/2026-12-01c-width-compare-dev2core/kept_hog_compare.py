"""Two jobs beside a CPU hog kept to the first CPU (taskset, nice 0), each job at nice 5 in the same
session (so that the nice values count with autogroup on or off): omp_phases (libgomp, 6 s of tiny
regions; the regions made count) and SciPy (tests/real/scipy_work.py on OpenMP OpenBLAS; its wall
time counts). Configurations, interleaved: natively, one worker (OMP_NUM_THREADS=1), this build's
shim, another build's (OLD_LIB); each run bounded at 60 s. Prints one line a run, and the
threads' CPU masks of the shim's runs (sampled every 20 ms) as "CPU: samples".
Usage, from the repository:
    OLD_LIB=<other build's libapshim.so> python3 bench/results/2026-12-01c-width-compare-dev2core/kept_hog_compare.py [REPS]"""
import os, sys, subprocess, threading, time
here = os.path.dirname(os.path.abspath(__file__))
root = os.path.join(here, "..", "..", "..")
sys.path.insert(0, os.path.join(root, "tests", "support"))
from cpu_hog import OutsideHog
from apshim_test import thread_cpu_masks
libs = {"apshim": os.path.abspath(os.environ.get("NEW_LIB", "build/shim/libapshim.so")),
        "apshim-old": os.path.abspath(os.environ["OLD_LIB"])}
programs = {
    "omp_phases": ([os.path.join(root, "build", "tests", "omp", "omp_phases_gcc"), "6000", "4", "20"], {}),
    "scipy": (["/usr/bin/python3", os.path.join(root, "tests", "real", "scipy_work.py")],
              {"LD_LIBRARY_PATH": "/usr/lib/x86_64-linux-gnu/openblas-openmp"}),
}
base = {k: v for k, v in os.environ.items() if not k.startswith(("APSHIM_", "OMP_"))}
configs = [("native", {}), ("one-worker", {"OMP_NUM_THREADS": "1"})] + [(n, {"LD_PRELOAD": l}) for n, l in libs.items()]
reps = int(sys.argv[1]) if len(sys.argv) > 1 else 1
cpu = min(os.sched_getaffinity(0))


def run(argv, env):
    masks, done = {}, threading.Event()
    p = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def watch():
        while not done.is_set():
            try:
                for m in thread_cpu_masks(p.pid).values():
                    masks[m] = masks.get(m, 0) + 1
            except Exception:
                pass
            time.sleep(0.02)

    w = threading.Thread(target=watch)
    w.start()
    try:
        out, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        out = "timed out at 60 s"
    done.set()
    w.join()
    return p.returncode, out, masks


for rep in range(reps):
    for prog, (argv, penv) in programs.items():
        for name, extra in configs:
            env = dict(base, **penv, **extra)
            if "LD_PRELOAD" in extra:
                env["APSHIM_GAT"] = f"/dev/shm/kept-compare-{name}-{rep}"
            with OutsideHog(nice=0, cpu=cpu):
                t = time.monotonic()
                rc, out, masks = run(["nice", "-n", "5", *argv], env)
                wall = time.monotonic() - t
            last = (out.strip().splitlines() or [""])[-1].split(" time_s=")[0][-60:]
            shown = {k: v for k, v in masks.items() if "LD_PRELOAD" in extra and "-" not in k and "," not in k}
            print(f"rep {rep} {prog} {name}: {wall:.2f} s rc {rc} {last} masks {shown}", flush=True)
            try:
                os.unlink(env.get("APSHIM_GAT", "/nonexistent"))
            except OSError:
                pass
