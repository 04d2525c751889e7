"""Named scenarios: which jobs arrive when, under which configurations.

A workload binary is bench/workloads' `wl_<name>_<runtime>` (runtime: tbb, omp_clang, omp_gcc);
every one prints `<name> <args> checksum=<c> time_s=<t>` and accepts `--threads N`.
"""
import os


class Job:
    def __init__(self, name, argv, arrival_s=0.0, env=None, accepts_threads=True):
        self.name, self.argv, self.arrival_s = name, argv, arrival_s
        self.env = env or {}
        self.accepts_threads = accepts_threads


class Scenario:
    def __init__(self, name, description, jobs, configs, reps, P, timeout_s=120):
        self.name, self.description, self.jobs = name, description, jobs
        self.configs, self.reps, self.P, self.timeout_s = configs, reps, P, timeout_s
        self.P_override = False
        self.shim_lib = self.gat_path = self.trace_pattern = None

    def max_concurrent(self):
        return len(self.jobs)


def wl(build, name, runtime):
    return os.path.join(build, "bench", "workloads", f"wl_{name}_{runtime}")


OMP_BASELINES = ["native", "passive", "static", "load_balance", "apshim"]
TBB_BASELINES = ["native", "static", "apshim"]


def tbb_pair(build, P, quick=False):
    # fib (cutoff 12: fine-grained but not pathological) runs ~2x as long as pfor alone; pfor
    # arrives while fib runs and leaves before it, so allocations change twice.
    fib = ["43", "12"] if quick else ["46", "12"]
    pfor = ["2000000", "30"] if quick else ["4000000", "60"]
    jobs = [Job("fib", [wl(build, "fib", "tbb")] + fib, 0.0),
            Job("pfor", [wl(build, "pfor", "tbb")] + pfor, 0.1 if quick else 0.5)]
    return Scenario("tbb_pair", "Two oneTBB jobs (fib, then a parallel-for kernel arriving later) co-running.",
                    jobs, TBB_BASELINES, 2 if quick else 5, P)


def omp_pair(build, P, quick=False, runtime="omp_clang"):
    fib = ["42", "12"] if quick else ["44", "12"]
    pfor = ["2000000", "30"] if quick else ["4000000", "60"]
    jobs = [Job("fib", [wl(build, "fib", runtime)] + fib, 0.0),
            Job("pfor", [wl(build, "pfor", runtime)] + pfor, 0.1 if quick else 0.5)]
    configs = OMP_BASELINES if runtime == "omp_clang" else [c for c in OMP_BASELINES if c != "load_balance"]
    return Scenario(f"{runtime}_pair", f"Two OpenMP jobs ({runtime}: fib with tasks, then a parallel-for kernel) co-running.",
                    jobs, configs, 2 if quick else 5, P)


def mixed_pair(build, P, quick=False):
    fib = ["43", "12"] if quick else ["46", "12"]
    pfor = ["2000000", "30"] if quick else ["4000000", "60"]
    jobs = [Job("fib_tbb", [wl(build, "fib", "tbb")] + fib, 0.0),
            Job("pfor_omp", [wl(build, "pfor", "omp_clang")] + pfor, 0.1 if quick else 0.5)]
    return Scenario("mixed_pair", "A oneTBB job and an OpenMP (libomp) job co-running.", jobs,
                    ["native", "passive", "static", "apshim"], 2 if quick else 5, P)


def overhead(build, P, quick=False, name="fib", runtime="tbb"):
    """Single job, native vs shim: the shim's cost when there is nobody to share with."""
    argv = {"fib": ["34", "0"] if quick else ["36", "0"], "fibcut": ["43", "12"] if quick else ["45", "12"],
            "pfor": ["2000000", "30"] if quick else ["4000000", "60"]}[name]
    prog = "fib" if name.startswith("fib") else name
    jobs = [Job(f"{name}_{runtime}", [wl(build, prog, runtime)] + argv, 0.0)]
    return Scenario(f"overhead_{name}_{runtime}", f"One {runtime} {name} job alone ({' '.join(argv)}): native vs under the shim.",
                    jobs, ["native", "apshim"], 3 if quick else 9, P)


def phases_pair(build, P, quick=False):
    """Sen P2: a job alternating serial and parallel phases next to a job with ample
    parallelism. A static split idles half the machine during the serial phases."""
    phases = ["150000", "400", "600", "3"] if quick else ["300000", "400", "1200", "4"]
    pfor = ["2000000", "30"] if quick else ["4000000", "60"]
    jobs = [Job("phases", [wl(build, "phases", "tbb")] + phases, 0.0),
            Job("pfor", [wl(build, "pfor", "tbb")] + pfor, 0.0)]
    return Scenario("phases_pair", "Sen P2 on oneTBB: serial/parallel phases next to a parallel-for job.", jobs,
                    TBB_BASELINES, 2 if quick else 5, P)


def loopy_inst(build, P, quick=False):
    """Sen Fig. 7-4: LOOPY under WSAP vs the instantaneous-parallelism estimator, next to a
    co-runner (so an under-estimated desire costs real time)."""
    loopy = ["200", "4000"] if quick else ["400", "8000"]
    jobs = [Job("loopy", [wl(build, "loopy", "tbb")] + loopy, 0.0),
            Job("pfor", [wl(build, "pfor", "tbb"), "2000000", "30"], 0.0)]
    return Scenario("loopy_inst", "LOOPY (oneTBB) with a co-runner: WSAP vs the instantaneous-parallelism strawman.",
                    jobs, ["native", "apshim", "apshim-inst", "apshim-asteal", "apshim-equi"], 2 if quick else 5, P)


ALL = {
    "loopy_inst": loopy_inst,
    "phases_pair": phases_pair,
    "tbb_pair": tbb_pair,
    "omp_pair": omp_pair,
    "gomp_pair": lambda build, P, quick=False: omp_pair(build, P, quick, runtime="omp_gcc"),
    "mixed_pair": mixed_pair,
    "overhead_fib_tbb": overhead,
    "overhead_fibcut_tbb": lambda build, P, quick=False: overhead(build, P, quick, "fibcut"),
    "overhead_pfor_tbb": lambda build, P, quick=False: overhead(build, P, quick, "pfor"),
}
