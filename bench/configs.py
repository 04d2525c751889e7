"""The configurations a user would otherwise pick, and apshim's, as environment changes.

Each configuration is a function (job, scenario) -> (extra_argv, env_changes). Only what the
user could really do is allowed: environment variables, or the workload's own --threads flag
for a static split (TBB has no environment variable for its thread count).
"""

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


def apshim(policy="wsap", eta=None, est_cycle_ms=None):
    def configure(job, sc):
        env = {"LD_PRELOAD": sc.shim_lib, "APSHIM_GAT": sc.gat_path, "APSHIM_POLICY": policy}
        if sc.P_override:
            env["APSHIM_P"] = str(sc.P)
        if eta is not None:
            env["APSHIM_ETA"] = str(eta)
        if est_cycle_ms is not None:
            env["APSHIM_EST_CYCLE_MS"] = str(est_cycle_ms)
        if sc.trace_pattern:
            env["APSHIM_TRACE"] = sc.trace_pattern.format(job=job.name)
        return [], env
    return configure


# Name -> configuration. Scenarios pick from these by name.
ALL = {
    "native": native,
    "passive": passive,
    "static": static_split,
    "load_balance": load_balance,
    "apshim": apshim(),
    "apshim-eta0.25": apshim(eta=0.25),
    "apshim-eta0.75": apshim(eta=0.75),
    "apshim-asteal": apshim(policy="asteal"),
    "apshim-equi": apshim(policy="static"),
    "apshim-inst": apshim(policy="inst"),
}
