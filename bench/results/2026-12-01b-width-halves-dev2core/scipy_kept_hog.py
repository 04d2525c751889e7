"""SciPy (tests/real/scipy_work.py, OpenMP OpenBLAS) beside a CPU hog kept to the first CPU
(taskset, nice 0) with SciPy at nice 19 in the same session: natively, one worker, this build's
shim and another (OLD_LIB), each run bounded at 120 s. Usage, from the repository:
    OLD_LIB=<other build's libapshim.so> python3 bench/results/2026-12-01b-width-halves-dev2core/scipy_kept_hog.py [REPS]"""
import os, sys, subprocess, time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tests", "support"))
from cpu_hog import OutsideHog
libs = {"apshim": os.path.abspath(os.environ.get("NEW_LIB", "build/shim/libapshim.so")),
        "apshim-9a84a97": os.path.abspath(os.environ["OLD_LIB"])}
work = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tests", "real", "scipy_work.py")
base = {k: v for k, v in os.environ.items() if not k.startswith(("APSHIM_", "OMP_"))}
base["LD_LIBRARY_PATH"] = "/usr/lib/x86_64-linux-gnu/openblas-openmp"
configs = [("native", {}), ("one-worker", {"OMP_NUM_THREADS": "1"})] + [(n, {"LD_PRELOAD": l}) for n, l in libs.items()]
reps = int(sys.argv[1]) if len(sys.argv) > 1 else 1
cpu = min(os.sched_getaffinity(0))
for rep in range(reps):
    for name, extra in configs:
        env = dict(base, **extra)
        if "LD_PRELOAD" in extra:
            env["APSHIM_GAT"] = f"/dev/shm/scipy-kept-{name}-{rep}"
        with OutsideHog(nice=0, cpu=cpu):
            t = time.monotonic()
            try:
                r = subprocess.run(["nice", "-n", "19", "/usr/bin/python3", work], env=env, capture_output=True, text=True, timeout=120)
                out = r.stdout.strip().splitlines()[-1].split(" time_s=")[0][-40:]
                what = f"{time.monotonic() - t:.2f} s rc {r.returncode} {out}"
            except subprocess.TimeoutExpired:
                what = "timed out at 120 s"
        print(f"rep {rep} {name}: {what}", flush=True)
