"""The configurations a user would otherwise pick, and apshim's, as environment changes.

Each configuration is a function (job, scenario) -> (extra_argv, env_changes). Only what the
user could really do is allowed: environment variables, or the workload's own --threads flag
for a static split (TBB has no environment variable for its thread count). `META[name]` says
what each one is (shown by `bench/run.py --list`); apshim configurations also carry their
est_cycle, policy and eta for the analyses (O1/O2 tables).
"""

import os
import sys

DEFAULT_EST_CYCLE_MS = 5  # the shim's default (README options table)


def native(job, sc):
    # Default: every job takes all cores; libomp spins KMP_BLOCKTIME=200 ms by default.
    return [], {}


def passive(job, sc):
    # Passive waiting: idle OpenMP threads sleep at once (no effect on TBB, which has no such knob).
    return [], {"OMP_WAIT_POLICY": "passive"}


def static_split(job, sc):
    # Static equipartition: each job gets P / (jobs running at once), fixed for its lifetime.
    share = max(1, sc.P // sc.max_concurrent())
    return ["--threads", str(share)], {}


def load_balance(job, sc):
    # libomp's own adaptive mode: team size at each fork from the system's run queue.
    return [], {"OMP_DYNAMIC": "true", "KMP_DYNAMIC_MODE": "load_balance"}


def mpi_bind(job, sc):
    # Open MPI binds each rank to a core (its default for two ranks; `mpirun --bind-to core`), so
    # each rank's OpenMP runtime sees one CPU and starts one thread. No effect on other programs.
    return [], {"OMPI_MCA_hwloc_base_binding_policy": "core"}


def one_worker(job, sc):
    # One worker, alone (bench/run.py runs this configuration's jobs one after another): the
    # job's work T1 for the greedy bound T1/P̄ + T∞ (Sen Theorem 3, experiment P3).
    return ["--threads", "1"], {}


def backoff(blocktime_ms, spincount):
    """A tuned backoff without adaptive allotment (Haselsteiner ch. 4/6): idle OpenMP threads
    spin `blocktime_ms` (libomp KMP_BLOCKTIME) or `spincount` iterations (libgomp
    GOMP_SPINCOUNT, ~1 ns each) and then sleep. No effect on oneTBB, whose own idle backoff has
    no knob. `backoff-1ms` is exactly what the shim sets for itself (adapters/omp/omp_env.cpp),
    so apshim vs backoff-1ms isolates the adaptive allotment."""
    def configure(job, sc):
        return [], {"KMP_BLOCKTIME": str(blocktime_ms), "GOMP_SPINCOUNT": str(spincount)}
    return configure


def apshim(policy="wsap", eta=None, est_cycle_ms=None, cap=False, dynamic=False, alt_lib=False, use_idle=True,
           idle_check=True, width_check=True, confine_check=True, confine=True):
    """LD_PRELOAD=libapshim.so with a private table. cap=True adds Sen's O3/P1 allocation limit:
    each job may use at most P/2 workers (the workload's --threads). dynamic=True: the user allows
    OpenMP's dynamic adjustment (OMP_DYNAMIC=true, as load_balance needs too), so the shim sizes
    each outermost team to the allotment at its fork instead of keeping the promised size.
    alt_lib=True: the library named by APSHIM_BENCH_ALT_LIB (another build, e.g. of the previous
    commit) instead of this build's, for an interleaved A/B of two versions of the shim.
    use_idle=False: APSHIM_USE_IDLE=0, each job held to exactly its allotment's processors.
    idle_check=False: APSHIM_IDLE_CHECK=0, idle processors used whether or not they help.
    width_check=False: APSHIM_WIDTH_CHECK=0, a job keeps what DP gives it, faster on fewer or not.
    confine_check=False: APSHIM_CONFINE_CHECK=0, no start and no probes: a throttled job is confined
    at once, whatever that costs it.
    confine=False: APSHIM_CONFINE=0, parking alone holds each job, as where the user binds threads."""
    def configure(job, sc):
        lib = sc.shim_lib
        if alt_lib:
            lib = os.environ.get("APSHIM_BENCH_ALT_LIB")
            if not lib or not os.path.isfile(lib):
                sys.exit("configuration apshim-alt: set APSHIM_BENCH_ALT_LIB to another build's libapshim.so")
        env = {"LD_PRELOAD": lib, "APSHIM_GAT": sc.gat_path, "APSHIM_POLICY": policy}
        if dynamic:
            env["OMP_DYNAMIC"] = "true"
        if not use_idle:
            env["APSHIM_USE_IDLE"] = "0"
        if not idle_check:
            env["APSHIM_IDLE_CHECK"] = "0"
        if not width_check:
            env["APSHIM_WIDTH_CHECK"] = "0"
        if not confine_check:
            env["APSHIM_CONFINE_CHECK"] = "0"
        if not confine:
            env["APSHIM_CONFINE"] = "0"
        if sc.P_override:
            env["APSHIM_P"] = str(sc.P)
        if eta is not None:
            env["APSHIM_ETA"] = str(eta)
        if est_cycle_ms is not None:
            env["APSHIM_EST_CYCLE_MS"] = str(est_cycle_ms)
        if sc.trace_pattern:
            pattern = sc.ranks_trace_pattern if job.ranks else sc.trace_pattern
            env["APSHIM_TRACE"] = pattern.format(job=job.name)
        argv = ["--threads", str(max(1, sc.P // 2))] if cap else []
        return argv, env
    configure.est_cycle_ms = est_cycle_ms or DEFAULT_EST_CYCLE_MS
    configure.policy, configure.eta = policy, eta or 0.5
    return configure


EST_CYCLES_MS = [1, 2, 5, 10, 25, 50, 100]  # Sen §7.1.1's sweep

# Name -> configuration. Scenarios pick from these by name.
ALL = {
    "native": native,
    "passive": passive,
    "static": static_split,
    "load_balance": load_balance,
    "one-worker": one_worker,
    "mpi-bind": mpi_bind,
    "backoff-1ms": backoff(1, 1_000),
    "backoff-10ms": backoff(10, 10_000_000),
    "backoff-50ms": backoff(50, 50_000_000),
    "apshim": apshim(),
    "apshim-eta0.25": apshim(eta=0.25),
    "apshim-eta0.75": apshim(eta=0.75),
    "apshim-asteal": apshim(policy="asteal"),
    "apshim-equi": apshim(policy="static"),
    "apshim-inst": apshim(policy="inst"),
    "apshim-cap": apshim(cap=True),
    "apshim-dynamic": apshim(dynamic=True),
    "apshim-alt": apshim(alt_lib=True),
    "apshim-noidle": apshim(use_idle=False),
    "apshim-noidlecheck": apshim(idle_check=False),
    "apshim-nowidthcheck": apshim(width_check=False),
    "apshim-nocheck": apshim(confine_check=False),
    "apshim-parking": apshim(confine=False),
    "apshim-alt-parking": apshim(alt_lib=True, confine=False),
}
for _ms in EST_CYCLES_MS:
    ALL[f"apshim-ec{_ms}"] = apshim(est_cycle_ms=_ms)
    ALL[f"apshim-inst-ec{_ms}"] = apshim(policy="inst", est_cycle_ms=_ms)

META = {
    "native": "nothing: every job takes all cores (libomp spins 200 ms when idle)",
    "passive": "OMP_WAIT_POLICY=passive (idle OpenMP threads sleep at once)",
    "static": "static equipartition: each job --threads P/J, J = jobs in the scenario",
    "load_balance": "libomp's adaptive mode: OMP_DYNAMIC=true KMP_DYNAMIC_MODE=load_balance",
    "mpi-bind": "Open MPI binds each rank to a core (OMPI_MCA_hwloc_base_binding_policy=core): one OpenMP thread a rank",
    "one-worker": "--threads 1, each job alone (the one-worker time T1 for the greedy bound)",
    "backoff-1ms": "tuned backoff, no allotment: KMP_BLOCKTIME=1 GOMP_SPINCOUNT=1000 (the shim's own setting)",
    "backoff-10ms": "backoff: KMP_BLOCKTIME=10 GOMP_SPINCOUNT=10000000",
    "backoff-50ms": "backoff: KMP_BLOCKTIME=50 GOMP_SPINCOUNT=50000000",
    "apshim": "LD_PRELOAD=libapshim.so: WSAP, eta 0.5, est_cycle 5 ms, private table",
    "apshim-eta0.25": "apshim, APSHIM_ETA=0.25",
    "apshim-eta0.75": "apshim, APSHIM_ETA=0.75 (Sen's P3 setting)",
    "apshim-asteal": "apshim, APSHIM_POLICY=asteal (A-Steal, multiplicative)",
    "apshim-equi": "apshim, APSHIM_POLICY=static: desire = P always, i.e. dynamic equipartition",
    "apshim-inst": "apshim, APSHIM_POLICY=inst: instantaneous-parallelism strawman (Sen §4.2)",
    "apshim-cap": "apshim with Sen's allocation limit (O3, P1): each job --threads P/2",
    "apshim-dynamic": "apshim with OMP_DYNAMIC=true: teams sized to the allotment at each fork (the user allows it)",
    "apshim-alt": "apshim from the library in APSHIM_BENCH_ALT_LIB (an A/B of two builds)",
    "apshim-noidle": "apshim, APSHIM_USE_IDLE=0: no job runs on processors beyond its allotment, even idle ones",
    "apshim-noidlecheck": "apshim, APSHIM_IDLE_CHECK=0: idle processors used whether or not they make the job faster",
    "apshim-nowidthcheck": "apshim, APSHIM_WIDTH_CHECK=0: a job keeps what DP gives it, whether or not it is faster on fewer",
    "apshim-nocheck": "apshim, APSHIM_CONFINE_CHECK=0: no start, no probes; a throttled job is confined at once",
    "apshim-parking": "apshim, APSHIM_CONFINE=0: parking alone holds each job, as where the user binds threads",
    "apshim-alt-parking": "apshim-alt (APSHIM_BENCH_ALT_LIB), APSHIM_CONFINE=0",
}
for _ms in EST_CYCLES_MS:
    META[f"apshim-ec{_ms}"] = f"apshim, APSHIM_EST_CYCLE_MS={_ms}"
    META[f"apshim-inst-ec{_ms}"] = f"apshim-inst, APSHIM_EST_CYCLE_MS={_ms}"


def is_shim(name):
    return name.startswith("apshim")


def est_cycle_ms(name):
    return getattr(ALL[name], "est_cycle_ms", None)
