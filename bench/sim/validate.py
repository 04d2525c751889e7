#!/usr/bin/python3
"""Validate the simulator against the real P = 2 benchmark runs (issue #7 item 2).

usage: bench/sim/validate.py [--sim PATH] [--real DIR] [--out DIR] [--seeds N]

For every bench scenario whose jobs the simulator can model (fib, pfor, phases, loopy), this
  1. calibrates each job's one-processor work T1 (seconds) from real single-job data (see CALIBRATION),
  2. builds a simulator dag of that T1 (1 step = STEP_US microseconds),
  3. simulates the scenario at P = 2 under the modelled configurations (native = every job runs P
     workers and the OS time-slices them; static = P / jobs workers each; apshim = WSAP + DP with
     est_cycle 5 ms, eta 0.5; apshim-inst / -asteal / -equi = the other estimators), N seeds, in
     four variants of the model (VARIANTS: Sen's, the parking shim of 2026-11-22, today's shim,
     today's shim with a per-measure shim cost),
  4. compares the mean-response ratio to native with the real runs (median [min-max] over the
     interleaved repetitions, ratio taken per repetition) and plots the real apshim allotment
     traces (trace-apshim-r0-*.csv) beside the simulated ones.
Writes DIR/validation_p2.md, DIR/validation_p2.csv and DIR/validation_p2_traces.png.
Nothing here times anything: the real numbers are read from bench/results.
"""
import argparse
import concurrent.futures as cf
import csv
import io
import math
import os
import statistics as st
import subprocess
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SIM = os.path.join(ROOT, "build-sim", "bench", "sim", "sim")
REAL = os.path.join(ROOT, "bench", "results", "2026-11-25b-all-dev2core")
PREVIOUS_REAL = "bench/results/2026-11-24b-untimed-dev2core"   # what the previous validation read (see DISCUSSION)
# The last full run whose hooks timed every task (apshim 1c87ec2): its overhead runs give the shim's
# cost per job while timed; REAL's (0debf01) give it untimed (a lone job at allotment P).
TIMED_REAL = os.path.join(ROOT, "bench", "results", "2026-11-24-all-dev2core")

P = 2
STEP_US = 2.0                      # one simulator step = 2 us of one core
EST_CYCLE_MS, ETA = 5.0, 0.5       # the shim's defaults, used by every real apshim run
LEND_MS = 1.0                      # APSHIM_LEND_MS default
PHI = (1 + 5 ** 0.5) / 2


def steps(seconds):
    return int(round(seconds * 1e6 / STEP_US))


# ------------------------------------------------------------------------------- real data
def read_raw(scenario, real=None):
    rows = list(csv.DictReader(open(os.path.join(real or REAL, scenario, "raw.csv"))))
    resp = defaultdict(dict)                      # (config, rep) -> {job: response_s}
    start = defaultdict(dict)
    for r in rows:
        resp[(r["config"], int(r["rep"]))][r["job"]] = float(r["response_s"])
        start[(r["config"], int(r["rep"]))][r["job"]] = float(r["start_s"])
    return resp, start


def median_of(scenario, config, job, real=None):
    resp, _ = read_raw(scenario, real)
    return st.median(v[job] for (c, _r), v in resp.items() if c == config)


def real_ratios(scenario, config):
    """Per repetition: mean response of `config` / mean response of native in the same repetition."""
    resp, _ = read_raw(scenario)
    reps = sorted(r for (c, r) in resp if c == config)
    return [st.mean(resp[(config, r)].values()) / st.mean(resp[("native", r)].values()) for r in reps]


def real_mean_resp(scenario, config):
    resp, _ = read_raw(scenario)
    return [st.mean(v.values()) for (c, _r), v in sorted(resp.items()) if c == config]


# ------------------------------------------------------------------------------ calibration
# One-processor work T1 (seconds) of each real job, from data that is not the scenario's own
# native/apshim result where such data exists:
#  * oneTBB fib(46,12), pfor(4M,60): 2 x the native time ALONE on the 2 cores (overhead_* runs),
#    i.e. assuming linear speedup on 2 cores (the simulator's fib/pfor dags have ample
#    parallelism, and the check column shows the static runs' one-thread times agree within 1%).
#    fib(46,12) = fib(45,12) x phi (calls grow as fib(n+1)).
#  * the busy unit of phases/loopy (us per unit): from phases_pair/static, where phases runs on one
#    thread on its own core for its whole life: u = response / total units. This makes
#    phases_pair/static partly a calibration point (marked in the table); loopy_inst uses the same u.
#  * OpenMP fib(44,12): there is no single-job OpenMP run, so T1 = that scenario's static (one
#    thread) fib time. Again a calibration point for static; see the discussion of work inflation.
def calibration():
    fib45 = median_of("overhead_fibcut_tbb", "native", "fibcut_tbb")
    pfor_alone = median_of("overhead_pfor_tbb", "native", "pfor_tbb")
    ph_static = median_of("phases_pair", "static", "phases")
    ph_units = 4 * (300000 + 400 * 1200)
    u_us = ph_static * 1e6 / ph_units
    cal = {
        "fib_tbb": (2 * fib45 * PHI, f"2 x fib(45,12) alone native {fib45:.3f} s x phi (overhead_fibcut_tbb)"),
        "pfor": (2 * pfor_alone, f"2 x pfor(4M,60) alone native {pfor_alone:.3f} s (overhead_pfor_tbb)"),
        "pfor_small": (2 * pfor_alone / 4, "pfor(4M,60) T1 / 4 (2M elements x 30 reps)"),
        "phases": (ph_units * u_us * 1e-6, f"{ph_units} busy units x u = {u_us:.4f} us (u from phases_pair/static)"),
        "loopy": (400 * 8000 * u_us * 1e-6, f"400 x 8000 busy units x u = {u_us:.4f} us"),
        "fib_omp_clang": (median_of("omp_pair", "static", "fib"), "omp_pair/static fib (one thread)"),
        "fib_omp_gcc": (median_of("gomp_pair", "static", "fib"), "gomp_pair/static fib (one thread)"),
    }
    # The shim's own cost per job (apshim alone / native alone), for the "sim + shim cost" column.
    over = {
        "fib_tbb": median_of("overhead_fibcut_tbb", "apshim", "fibcut_tbb") / fib45,
        "pfor": median_of("overhead_pfor_tbb", "apshim", "pfor_tbb") / pfor_alone,
    }
    # The same ratio from the run whose hooks were timed throughout (same machine, two days'
    # builds apart): the cost of a cycle the shim times. Absent: the untimed cost stands in.
    timed = dict(over)
    if os.path.isdir(TIMED_REAL):
        timed = {
            "fib_tbb": median_of("overhead_fibcut_tbb", "apshim", "fibcut_tbb", TIMED_REAL)
            / median_of("overhead_fibcut_tbb", "native", "fibcut_tbb", TIMED_REAL),
            "pfor": median_of("overhead_pfor_tbb", "apshim", "pfor_tbb", TIMED_REAL)
            / median_of("overhead_pfor_tbb", "native", "pfor_tbb", TIMED_REAL),
        }
    return cal, u_us, over, timed


# ------------------------------------------------------------------------------- dag models
def fib_dag(T1_s):
    """fib:N*S with S*W(N) closest to T1, 20 <= S <= 100 steps per node (tasks of 40-200 us: fine
    grained against the 5 ms est_cycle, as the real fib's tasks are)."""
    target = steps(T1_s)
    best = None
    for n in range(10, 30):
        a, b = 1, 1
        for _ in range(2, n + 1):
            a, b = b, 2 + a + b
        W = b
        S = round(target / W)
        if S < 20 or S > 100:
            continue
        err = abs(S * W - target) / target
        if best is None or err < best[0]:
            best = (err, f"fib:{n}*{S}")
    return best[1]


def binary_tree(total_steps, depths=range(7, 12)):
    """A parallel_for as a balanced binary tree (knary:d:2:0:W) of about total_steps of work."""
    best = None
    for d in depths:
        nodes = 2 ** d - 1
        W = max(1, round(total_steps / nodes))
        err = abs(W * nodes - total_steps) / total_steps
        if best is None or err < best[0]:
            best = (err, f"knary:{d}:2:0:{W}")
    return best[1]


def pfor_dag(T1_s, reps):
    # `reps` parallel loops one after another (each ends at a join).
    return "+".join([binary_tree(steps(T1_s) / reps)] * reps)


def phases_dag(u_us, serial_units=300000, tasks=400, task_units=1200, reps=4):
    serial = f"knary:1:1:1:{round(serial_units * u_us / STEP_US)}"
    par = binary_tree(tasks * task_units * u_us / STEP_US, depths=[9])  # 511 nodes ~ 400 tasks
    return "+".join([serial, par] * reps)


def loopy_dag(u_us, n=400, work=8000):
    return f"loopy:{n}:{round(work * u_us / STEP_US)}"


def T1_of(spec):
    """T1 in steps of a dag spec, the simulator's closed form (recomputed here for the table)."""
    tot = 0
    for ph in spec.split("+"):
        body, _, mult = ph.partition("*")
        S = int(mult) if mult else 1
        f = body.split(":")
        if f[0] == "fib":
            a, b = 1, 1
            for _ in range(2, int(f[1]) + 1):
                a, b = b, 2 + a + b
            tot += S * b
        elif f[0] == "loopy":
            n, L = int(f[1]), int(f[2])
            tot += S * (n + n * L)
        else:
            n, k, w = int(f[1]), int(f[2]), int(f[4]) if len(f) > 4 else 1
            t = w
            for _ in range(2, n + 1):
                t = w + k * t
            tot += S * t
    return tot


# -------------------------------------------------------------------------------- scenarios
# The four variants of the model (sim_call):
#  sen   Sen's model as reproduce.py runs it: join at desire 1, sleep at any task boundary, idle
#        workers spin, hooks time every task, no shim cost.
#  park  the runtime-aware model of the previous validation (the shim of 2026-11-22): idle threads
#        block after their runtime's spin time; under apshim oneTBB workers park only after an
#        outermost task (200 ms valve), join at 1, every job's work scaled by its shim cost.
#  shim  today's shim (docs/ARCHITECTURE.md): idle threads block as in `park`; under apshim a job
#        joins at desire P, is measured by its threads' CPU clocks while its allotment covers its
#        threads and by the hooks otherwise (--measure auto; a oneTBB job, whose hooks stay untimed
#        while it is confined, by the clocks always: the scenario's "measure"), is held to its allotment by
#        confinement instead of parking (--confine), lends while quiet for 1 ms (--lend), and its
#        work is scaled by its shim cost alone (the hooks untimed).
#  cost  `shim` with a per-measure shim cost: each job's work scaled by
#        clocks_share x untimed cost + (1 - clocks_share) x timed cost, clocks_share = the share of
#        its cycles that `shim` (seed 1, same scenario and configuration) measured by the clocks
#        (the auto rule: untimed hooks), i.e. one fixed-point iteration from the untimed cost.
VARIANTS = {"sen": "sim (Sen)", "park": "sim (parking, 11-22 model)", "shim": "sim (shim: join P, auto, confine, lend)",
            "cost": "sim (shim + per-measure cost)"}

# Idle waiting of each runtime before an idle thread blocks (runtime-aware variants, --idle-block):
# oneTBB workers spin briefly then sleep (assumed 100 us); libomp spins KMP_BLOCKTIME = 200 ms;
# libgomp spins GOMP_SPINCOUNT = 300,000 pause loops when OMP_WAIT_POLICY is unset (assumed 10 ms).
IDLE_S = {"tbb": 100e-6, "omp_clang": 0.2, "omp_gcc": 0.01}
PARK_VALVE_S = 0.2   # oneTBB adapter: one stay in the parking lot lasts at most 200 ms


# "measure": how the shim measures a scenario's jobs (the `shim` and `cost` variants). oneTBB's
# hooks stay untimed while the job is confined (docs/ARCHITECTURE.md), so a oneTBB-only scenario
# is measured by the clocks in every cycle (the real traces: 1.00 of cycles `clocks`); OpenMP jobs
# by the auto rule. The simulator has one rule per run: mixed_pair (oneTBB fib + libomp pfor) keeps
# auto, so its fib is modelled timed while throttled, as it is not.
def scenarios(cal, u_us):
    fib_tbb = fib_dag(cal["fib_tbb"][0])
    pfor = pfor_dag(cal["pfor"][0], 60)
    return {
        "tbb_pair": {"jobs": [("fib", fib_tbb, 0.0, "fib_tbb"), ("pfor", pfor, 0.5, "pfor")],
                     "configs": ["native", "static", "apshim"], "runtime": "tbb", "measure": "clocks"},
        "phases_pair": {"jobs": [("phases", phases_dag(u_us), 0.0, "phases"), ("pfor", pfor, 0.0, "pfor")],
                        "configs": ["native", "static", "apshim"], "runtime": "tbb", "measure": "clocks"},
        "omp_pair": {"jobs": [("fib", fib_dag(cal["fib_omp_clang"][0]), 0.0, "fib_omp"), ("pfor", pfor, 0.5, "pfor")],
                     "configs": ["native", "passive", "static", "load_balance", "apshim"], "runtime": "omp_clang"},
        "gomp_pair": {"jobs": [("fib", fib_dag(cal["fib_omp_gcc"][0]), 0.0, "fib_omp"), ("pfor", pfor, 0.5, "pfor")],
                      "configs": ["native", "passive", "static", "apshim"], "runtime": "omp_gcc"},
        # one global idle rule: oneTBB's, the fib job's runtime (pfor_omp idles only at loop ends)
        "mixed_pair": {"jobs": [("fib_tbb", fib_tbb, 0.0, "fib_tbb"), ("pfor_omp", pfor, 0.5, "pfor")],
                       "configs": ["native", "passive", "static", "apshim"], "runtime": "tbb"},
        "loopy_inst": {"jobs": [("loopy", loopy_dag(u_us), 0.0, "loopy"),
                                ("pfor", pfor_dag(cal["pfor_small"][0], 30), 0.0, "pfor")],
                       "configs": ["native", "apshim", "apshim-inst", "apshim-asteal", "apshim-equi"], "runtime": "tbb",
                       "measure": "clocks"},
    }


# How each real configuration is modelled. passive / load_balance differ from native only in how
# idle OpenMP threads wait (spin vs sleep); the model has no spinning, so they are native here.
SIM_ARGS = {
    "native": ["--native", P],
    "passive": ["--native", P],
    "load_balance": ["--native", P],
    "static": ["--static", P // 2],
    "apshim": ["--policy", "wsap"],
    "apshim-inst": ["--policy", "inst"],
    "apshim-asteal": ["--policy", "asteal"],
    "apshim-equi": ["--policy", "static"],
}


def scaled(spec, factor):
    """The same dag with every work unit `factor` times longer (rounded per phase)."""
    if abs(factor - 1) < 1e-9:
        return spec
    out = []
    for ph in spec.split("+"):
        body, _, mult = ph.partition("*")
        S = int(mult) if mult else 1
        f = body.split(":")
        if f[0] == "fib":
            out.append(f"{body}*{max(1, round(S * factor))}")
        elif f[0] == "loopy":
            out.append(f"loopy:{f[1]}:{round(int(f[2]) * factor)}" + (f"*{S}" if mult else ""))
        else:
            out.append(":".join(f[:4] + [str(round(int(f[4]) * factor))]) + (f"*{S}" if mult else ""))
    return "+".join(out)


def run_sim(args):
    out = subprocess.run(["nice", "-n", "19", SIM, *map(str, args)], check=True, capture_output=True, text=True).stdout
    return list(csv.DictReader(io.StringIO(out)))


def sim_call(sc, config, seed, variant="sen", overhead=None, trace=False):
    """The simulator's arguments for one run of `config` in `variant` (VARIANTS, above)."""
    apshim = config.startswith("apshim")
    jobs = []
    for name, spec, arr, kind in sc["jobs"]:
        if variant != "sen" and apshim and overhead is not None:
            spec = scaled(spec, overhead.get(kind, 1.0))
        jobs.append(f"{spec}@{steps(arr)}")
    extra = []
    if variant == "sen" or variant == "park":
        extra += ["--join-desire", 1]
    if variant != "sen":
        extra += ["--idle-block", steps(IDLE_S[sc["runtime"]])]
    if variant == "park" and apshim and sc["runtime"] == "tbb":
        extra += ["--outermost-only", "--park-valve", steps(PARK_VALVE_S)]
    if variant in ("shim", "cost") and apshim:
        extra += ["--join-desire", "P", "--measure", sc.get("measure", "auto"), "--confine", "--lend",
                  steps(LEND_MS / 1000)]
    args = ["--P", P, "--est-cycle", steps(EST_CYCLE_MS / 1000), "--eta", ETA, "--seed", seed,
            *SIM_ARGS[config], *extra, "--jobs", ",".join(jobs), "--out", "trace" if trace else "jobs"]
    return args


def fmt_range(v):
    return f"{st.median(v):.2f} [{min(v):.2f}-{max(v):.2f}]"


DISCUSSION = """## What changed since the previous validation, and what the numbers say

**Previous validation** (2026-11-24, `bench/results/2026-11-24b-untimed-dev2core`, apshim at
0debf01): the *shim* model with a per-measure cost (fib throttled 85% of its cycles and charged
the hooks' timed cost 1.135 there) had 17 of 24 rows in the real range; tbb_pair / mixed_pair
1.10 against real 1.14 [1.09-1.20] / 1.13 [1.09-1.15], phases_pair 0.94 against 1.00
[0.97-1.04], loopy_inst 1.00 against 0.98 [0.84-1.00], the OpenMP fib pairs outside the model
(below).

**This validation** (2026-11-25, `bench/results/2026-11-25b-all-dev2core`, apshim at 0b1a017:
oneTBB without task hooks while confined, nested waits a tail call, the clocks measure capped at
the CPU an external thread got, libgomp's nested taskwaits without a frame). One model change:
a oneTBB job is measured by its CPU clocks in every cycle (the scenario's `measure`), because the confined shim
keeps oneTBB's hooks untimed at any allotment; the real traces agree (1.00 of the cycles of every
oneTBB job read `clocks`; under the auto rule the model had 0.16 for fib, and charged it the old
timed cost for the rest). So fib is charged its untimed cost alone, 0.921 (the lone job ran 8%
faster under the shim than natively in this run). mixed_pair keeps the auto rule (one rule per
simulator run), so its fib is still charged the timed cost in the *cost* column. With the same
change on the previous day's data (2026-11-25-all-dev2core, apshim ba13a51) 18 of 24 rows were in
range; on this run 15 (*shim*) and 16 (*cost*).

**What the rows say.**
1. *The simulated apshim is close to the real one; the simulated native is not.* apshim mean
   response, sim (shim) vs real: tbb_pair 3.687 vs 3.569 s (+3%), phases_pair 3.563 vs 3.651 s
   (-2%), loopy_inst 1.821 vs 1.842 s (-1%). Native: tbb_pair 3.927 vs 3.473 s (+13%). The
   calibration takes oneTBB fib's one-thread work from its two-thread native run alone (2 x 1.224 s x
   phi = 3.96 s), which assumes a speedup of 2; in this run the static one-thread fib took 3.44 s
   (the check column), so fib's two threads reached a speedup of about 1.75 natively. The model's
   native runs that inflated work on two ideal processors; its apshim runs it with the lone-job
   cost factor 0.921, which absorbs most of the same inflation. Every oneTBB ratio (apshim 0.94,
   static 1.25) therefore reads about 10% below the real one (1.03, 1.31). In 2026-11-24b the same
   calibration matched (3.528 vs 3.506 s).
2. *tbb_pair 1.03 real.* Both jobs want both CPUs in every estimate (desire 2 in 100% of them,
   real and simulated), so DP's best is the equal split that native time-slicing already gives,
   and apshim can only add its cost. Measured apart (same day, a stand-in co-runner holding the
   other CPU): fib(45, cutoff 12) confined at allotment 1 took 2.16 s against 2.09 s with one thread
   natively before 0b1a017 (every nested wait counted under any allotment below 2) and 2.10 s
   after; two native threads pinned to one CPU 2.10 s. This run is at 0b1a017.
3. *phases_pair 0.98 real vs 0.94 sim*: as before, the real phases job joins late (its first serial
   phase generates the input on 2 CPUs), not modelled.
4. *loopy_inst*: in range for every estimator in every variant but the Sen model (a 0.99 just
   below the real 1.00-1.01 of asteal).

**OpenMP fib (omp_pair, gomp_pair): still outside the model.** The tasking runtimes do much more
work with 2 threads than with 1 (native fib 4.1-5.1 s / 2.5-3.2 s for a one-thread fib of 2.0 s /
1.25 s), and the shim runs nested tasks at once on one CPU (apshim fib 2.41 s / 1.26 s, close to
one thread), so apshim beats native by avoiding that growth (0.84 / 0.73). The simulator's work
does not depend on the thread count: it predicts apshim = native (1.00-1.01).

**Not modelled at all**: memory bandwidth and cache sharing (pfor: 64 MB of arrays), a parallel
speedup below the thread count on a lone job (item 1), time-slice granularity and scheduler
heuristics (the model shares processors fairly every 2 us step), process start-up and input
generation (inside the real response times, inside T1 here through the calibration), the
controller thread's CPU time, the shim's lazy join.
""".splitlines()


# ------------------------------------------------------------------------------------- main
def main():
    global SIM, REAL
    ap = argparse.ArgumentParser()
    ap.add_argument("--sim", default=SIM)
    ap.add_argument("--real", default=REAL)
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    ap.add_argument("--seeds", type=int, default=5)
    a = ap.parse_args()
    SIM, REAL = a.sim, a.real
    os.makedirs(a.out, exist_ok=True)
    cal, u_us, over, timed_over = calibration()
    scs = scenarios(cal, u_us)
    seeds = list(range(1, a.seeds + 1))
    kinds = list(VARIANTS)

    # Every simulation, in parallel (2 at a time: the machine is shared). Pass 1: every variant
    # but `cost`, with a trace of each apshim configuration under `shim` for its clocks share.
    calls = {}
    for name, sc in scs.items():
        for cfg in sc["configs"]:
            for s in seeds:
                for kind in kinds[:-1]:
                    calls[(name, cfg, s, kind)] = sim_call(sc, cfg, s, kind, overhead=over)
            if cfg.startswith("apshim"):
                calls[(name, cfg, 1, "trace-shim")] = sim_call(sc, cfg, 1, "shim", overhead=over, trace=True)
        for kind in kinds[:-1]:
            calls[(name, "apshim", 1, "trace-" + kind)] = sim_call(sc, "apshim", 1, kind, overhead=over, trace=True)
    with cf.ThreadPoolExecutor(max_workers=2) as pool:
        res = dict(zip(calls, pool.map(run_sim, calls.values())))

    # Pass 2 (`cost`): per job, its clocks share under `shim` blends the untimed and timed costs.
    def clocks_share(name, cfg, i):
        rows = [r for r in res[(name, cfg, 1, "trace-shim")] if int(r["job"]) == i and r["event"] == "estimate"]
        return sum(r["measure"] == "clocks" for r in rows) / max(1, len(rows))

    blend = {}   # (scenario, config, job index) -> (clocks share, cost factor)
    calls2 = {}
    for name, sc in scs.items():
        for cfg in sc["configs"]:
            if not cfg.startswith("apshim"):
                for s in seeds:   # the shim options touch apshim only: these are `shim`'s runs
                    res[(name, cfg, s, "cost")] = res[(name, cfg, s, "shim")]
                continue
            per_job = {}
            for i, (_jn, _spec, _arr, kind) in enumerate(sc["jobs"]):
                share = clocks_share(name, cfg, i)
                f = share * over.get(kind, 1.0) + (1 - share) * timed_over.get(kind, 1.0)
                blend[(name, cfg, i)] = (share, f)
                per_job[i] = f
            sc_cost = dict(sc, jobs=[(jn, scaled(spec, per_job[i]), arr, "as-is")
                                     for i, (jn, spec, arr, _k) in enumerate(sc["jobs"])])
            for s in seeds:
                calls2[(name, cfg, s, "cost")] = sim_call(sc_cost, cfg, s, "cost")
            if cfg == "apshim":
                calls2[(name, cfg, 1, "trace-cost")] = sim_call(sc_cost, cfg, 1, "cost", trace=True)
    with cf.ThreadPoolExecutor(max_workers=2) as pool:
        res.update(zip(calls2, pool.map(run_sim, calls2.values())))

    def sim_mean_resp(name, cfg, s, kind):
        rows = res[(name, cfg, s, kind)]
        return st.mean(int(r["response"]) for r in rows) * STEP_US * 1e-6

    def sim_job_resp(name, cfg, kind):
        per = defaultdict(list)
        for s in seeds:
            for (jn, *_), r in zip(scs[name]["jobs"], res[(name, cfg, s, kind)]):
                per[jn].append(int(r["response"]) * STEP_US * 1e-6)
        return {k: st.median(v) for k, v in per.items()}

    def estimates(kind, name, i):
        return [r for r in res[(name, "apshim", 1, "trace-" + kind)] if int(r["job"]) == i and r["event"] == "estimate"]

    lend_steps = steps(LEND_MS / 1000)
    md = ["# Simulator vs real runs at P = 2 (issue #7 item 2, redone for issue #14 item 4)", "",
          f"Generated by `bench/sim/validate.py` from `{os.path.relpath(REAL, ROOT)}` (real: 5 interleaved "
          f"repetitions per configuration) and the simulator ({len(seeds)} seeds per configuration). "
          f"P = 2, 1 step = {STEP_US:g} us, est_cycle {EST_CYCLE_MS:g} ms = {steps(EST_CYCLE_MS / 1000)} steps, "
          f"eta {ETA}, steal attempt 1 step.", "",
          "The simulated apshim of today's shim (*sim (shim)*): `--join-desire P --measure auto --confine "
          f"--lend {lend_steps}` (APSHIM_LEND_MS = {LEND_MS:g} ms = {lend_steps} steps) plus the runtimes' idle "
          "blocking. **Lending never triggers at P = 2**: two jobs hold 1 processor each, and a job lends "
          "only while it holds more than 1 and another job wants more; a job alone has nobody to lend to. "
          "It is on so that the configuration is the shim's; the unit test `sim.lending while quiet ...` "
          "shows it at P = 4.", "",
          "## Calibration: one-processor work T1 of each job", "",
          "| job (real) | T1 (s) | source | simulator dag (per phase) | dag T1 (s) | check: real static one-thread response (s) |",
          "|---|---|---|---|---|---|"]
    checks = {
        "fib_tbb": ("tbb_pair", "static", "fib"), "pfor": ("tbb_pair", "static", "pfor"),
        "phases": ("phases_pair", "static", "phases"),
        "fib_omp_clang": ("omp_pair", "static", "fib"), "fib_omp_gcc": ("gomp_pair", "static", "fib"),
    }
    dag_of = {"fib_tbb": scs["tbb_pair"]["jobs"][0][1], "pfor": scs["tbb_pair"]["jobs"][1][1],
              "pfor_small": scs["loopy_inst"]["jobs"][1][1], "phases": scs["phases_pair"]["jobs"][0][1],
              "loopy": scs["loopy_inst"]["jobs"][0][1], "fib_omp_clang": scs["omp_pair"]["jobs"][0][1],
              "fib_omp_gcc": scs["gomp_pair"]["jobs"][0][1]}
    label = {"fib_tbb": "oneTBB fib 46 12", "pfor": "pfor 4000000 60 (TBB; also libomp/libgomp)",
             "pfor_small": "pfor 2000000 30 (loopy_inst)", "phases": "oneTBB phases 300000 400 1200 4",
             "loopy": "oneTBB loopy 400 8000", "fib_omp_clang": "libomp fib 44 12", "fib_omp_gcc": "libgomp fib 44 12"}
    for k, (T1, src) in cal.items():
        spec = dag_of[k]
        parts = spec.split("+")
        short = spec if len(parts) <= 2 else f"{len(parts)} phases: " + " + ".join(dict.fromkeys(parts))
        chk = ""
        if k in checks:
            chk = f"{median_of(*checks[k]):.3f}"
            if k == "pfor":
                chk += " (TBB); " + ", ".join(f"{median_of(s, 'static', j):.3f}" for s, j in
                                             (("omp_pair", "pfor"), ("gomp_pair", "pfor"), ("mixed_pair", "pfor_omp")))
                chk += " (libomp, libgomp, mixed)"
            if k in ("phases", "fib_omp_clang", "fib_omp_gcc"):
                chk += " (calibration point)"
        md.append(f"| {label[k]} | {T1:.3f} | {src} | `{short}` | {T1_of(spec) * STEP_US * 1e-6:.3f} | {chk} |")
    md += ["", f"Shim cost per job used by the *park* and *shim* simulations of apshim (apshim alone / native alone, "
               f"medians of the overhead runs): oneTBB fib(45,12) {over['fib_tbb']:.3f}, pfor {over['pfor']:.3f}; the other jobs "
               f"(coarse tasks: loopy 8000 units, phases 1200 units; OpenMP fib: no single-job run) 1.000. "
               f"These are untimed costs (a lone job's hooks are untimed since 0debf01).", "",
               f"Per-measure cost (*sim (shim + per-measure cost)*): the timed cost from `{os.path.relpath(TIMED_REAL, ROOT)}` "
               f"(apshim 1c87ec2, hooks timing every task; same ratio of medians, apshim alone / native alone): "
               f"oneTBB fib(45,12) {timed_over['fib_tbb']:.3f}, pfor {timed_over['pfor']:.3f} (below the untimed 1.048: within "
               "the runs' spread, pfor's tasks are coarse, so its cost is noise either way). Each apshim job's factor = "
               "clocks share x untimed + (1 - clocks share) x timed, the clocks share being its simulated share under "
               "*sim (shim)* (seed 1), i.e. one iteration:", "",
               "| scenario | configuration | job | clocks share (sim shim) | cost factor |", "|---|---|---|---|---|"]
    for (name, cfg, i), (share, f) in blend.items():
        jn, _spec, _arr, kind = scs[name]["jobs"][i]
        if kind in over:
            md.append(f"| {name} | {cfg} | {jn} | {share:.2f} | {f:.3f} |")
    md += [""]

    # ---- side-by-side table
    md += ["## Mean response time, ratio to native (median [min-max]; real: per repetition, sim: per seed)", "",
           "*sim (Sen)*: the simulator as in `reproduce.py` (join at 1, sleep at any task boundary, idle workers "
           "spin, no shim cost). *sim (parking)*: the previous validation's runtime-aware model of the "
           "2026-11-22 shim (idle threads block after their runtime's spin time; under apshim oneTBB jobs park "
           "only after an outermost task, 200 ms valve; join at 1; work scaled by the shim cost). *sim (shim)*: "
           "today's shim (join at P, clocks/hooks by the auto rule, confinement, lending 1 ms; idle blocking and "
           "shim cost as in parking). *within*: the sim median lies in the real [min-max].", "",
           "| scenario | configuration | real | " + " | ".join(f"{VARIANTS[k]} | within?" for k in kinds) +
           " | real mean response (s) | " + " | ".join(f"{k} (s)" for k in kinds) + " |",
           "|---|---|---|" + "---|---|" * len(kinds) + "---|" + "---|" * len(kinds)]
    csv_rows = []
    verdict = {}
    for name, sc in scs.items():
        for cfg in sc["configs"]:
            rr = real_ratios(name, cfg)
            lo, hi = min(rr), max(rr)
            cols, row = [], {}
            for kind in kinds:
                sr = [sim_mean_resp(name, cfg, s, kind) / sim_mean_resp(name, "native", s, kind) for s in seeds]
                inside = lo <= st.median(sr) <= hi
                absolute = st.median(sim_mean_resp(name, cfg, s, kind) for s in seeds)
                cols.append((sr, inside, absolute))
                row[kind] = (st.median(sr), min(sr), max(sr), inside, absolute)
            verdict[(name, cfg)] = (st.median(rr), *[c[1] for c in cols])
            note = " (= native in the model)" if cfg in ("passive", "load_balance") else ""
            real_abs = st.median(real_mean_resp(name, cfg))
            md.append(f"| {name} | {cfg}{note} | {fmt_range(rr)} | " +
                      " | ".join(f"{fmt_range(c[0])} | {'yes' if c[1] else 'no'}" for c in cols) +
                      f" | {real_abs:.3f} | " + " | ".join(f"{c[2]:.3f}" for c in cols) + " |")
            csv_rows.append({"scenario": name, "config": cfg, "real_ratio_median": f"{st.median(rr):.4f}",
                             "real_ratio_min": f"{lo:.4f}", "real_ratio_max": f"{hi:.4f}",
                             **{f"sim_{k}_{f}": (f"{v:.4f}" if isinstance(v, float) else int(v))
                                for k in kinds for f, v in zip(("ratio_median", "ratio_min", "ratio_max",
                                                                "within", "mean_response_s"), row[k])},
                             "real_mean_response_s": f"{real_abs:.4f}"})
    with open(os.path.join(a.out, "validation_p2.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(csv_rows[0]))
        w.writeheader()
        w.writerows(csv_rows)
    n_within = {k: sum(v[1 + i] for v in verdict.values()) for i, k in enumerate(kinds)}
    md += ["", "Rows within the real range: " + ", ".join(f"{VARIANTS[k]} {n_within[k]} of {len(verdict)}" for k in kinds) + "."]

    # ---- per-job responses
    md += ["", "## Median response time per job (s): real / " + " / ".join(VARIANTS[k] for k in kinds), "",
           "| scenario | configuration | job 1 | job 2 |", "|---|---|---|---|"]
    for name, sc in scs.items():
        resp, _ = read_raw(name)
        sj = {(cfg, k): sim_job_resp(name, cfg, k) for cfg in sc["configs"] for k in kinds}
        for cfg in sc["configs"]:
            cells = []
            for jn, *_ in sc["jobs"]:
                real = st.median(v[jn] for (c, _r), v in resp.items() if c == cfg)
                cells.append(f"{jn}: {real:.3f} / " + " / ".join(f"{sj[(cfg, k)][jn]:.3f}" for k in kinds))
            md.append(f"| {name} | {cfg} | " + " | ".join(cells) + " |")

    # ---- traces plot
    names = list(scs)
    fig, axes = plt.subplots(len(names), 1 + len(kinds), figsize=(5 * (1 + len(kinds)), 2.1 * len(names)), sharey=True)
    colours = ["tab:blue", "tab:orange"]

    def draw(ax, series, tkey, akey, dkey, tscale):
        tmax = 0
        for i, (jn, t0, rows) in enumerate(series):
            ts = [t0 + float(r[tkey]) * tscale for r in rows]
            if not ts:
                continue
            tmax = max(tmax, ts[-1])
            ax.step(ts, [int(r[akey]) + 0.04 * i for r in rows], where="post", color=colours[i], label=f"{jn} allotment")
            ax.step(ts, [int(r[dkey]) - 0.04 * (i + 1) for r in rows], where="post", color=colours[i], ls=":",
                    label=f"{jn} desire")
        return tmax

    def real_trace(name, jn):
        return list(csv.DictReader(open(os.path.join(REAL, name, f"trace-apshim-r0-{jn}.csv"))))

    for row, name in enumerate(names):
        sc = scs[name]
        _, start = read_raw(name)
        # Trace times count from the job's controller start, which is lazy (first use of its runtime):
        # phases starts with a serial phase that uses no TBB, so its trace begins after it.
        real = [(jn, start[("apshim", 0)][jn] + (300000 * u_us * 1e-6 if jn == "phases" else 0.0), real_trace(name, jn))
                for jn, *_ in sc["jobs"]]
        tmax = draw(axes[row][0], real, "time_ms", "allotment", "desire", 1e-3)
        for col, kind in enumerate(kinds, start=1):
            series = [(jn, 0.0, estimates(kind, name, i)) for i, (jn, *_) in enumerate(sc["jobs"])]
            tmax = max(tmax, draw(axes[row][col], series, "t", "allot", "desire", STEP_US * 1e-6))
        for ax, what in zip(axes[row], ["real (rep 0)"] + [f"{VARIANTS[k]} (seed 1)" for k in kinds]):
            ax.set_title(f"{name}: {what}", fontsize=8)
            ax.set_xlim(0, tmax * 1.02)
            ax.set_ylim(0.5, 2.5)
            ax.set_yticks([1, 2])
            ax.grid(alpha=0.3)
        axes[row][0].set_ylabel("processors")
        axes[row][0].legend(fontsize=6, loc="lower right", ncol=2)
    for ax in axes[-1]:
        ax.set_xlabel("time (s)")
    fig.suptitle("apshim (WSAP, eta 0.5, est_cycle 5 ms), P = 2: allotment (solid) and desire (dotted) per job", fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(a.out, "validation_p2_traces.png"), dpi=80)
    plt.close(fig)

    # ---- trace agreement numbers
    md += ["", "## Allotment traces (apshim): real rep 0 vs simulated seed 1", "",
           "`validation_p2_traces.png` plots them side by side. Share of each job's estimates at which "
           "its desire / allotment was 2 (the rest: 1), real / " + " / ".join(VARIANTS[k] for k in kinds) +
           "; share of cycles measured by the clocks (real trace column `measure`) / sim (shim) / sim (shim + per-measure cost) (`--measure auto`):", "",
           "| scenario | job | desire 2 | allotment 2 | estimates | clocks | real: mean `busy` while allotment 1 |",
           "|---|---|---|---|---|---|---|"]
    fr = lambda rows, k: sum(int(r[k]) >= 2 for r in rows) / max(1, len(rows))  # noqa: E731
    clk = lambda rows: sum(r["measure"] == "clocks" for r in rows) / max(1, len(rows))  # noqa: E731
    for name, sc in scs.items():
        for i, (jn, *_) in enumerate(sc["jobs"]):
            real = real_trace(name, jn)
            sims = [estimates(k, name, i) for k in kinds]
            md.append(f"| {name} | {jn} | {fr(real, 'desire'):.2f} / " + " / ".join(f"{fr(q, 'desire'):.2f}" for q in sims) +
                      f" | {fr(real, 'allotment'):.2f} / " + " / ".join(f"{fr(q, 'allot'):.2f}" for q in sims) +
                      f" | {len(real)} / " + " / ".join(str(len(q)) for q in sims) +
                      f" | {clk(real):.2f} / {clk(sims[-2]):.2f} / {clk(sims[-1]):.2f} | "
                      f"{st.mean([float(r['busy']) for r in real if r['allotment'] == '1'] or [0]):.2f} |")
    lends = sum(r["event"] == "lend" for (n_, c_, s_, kind), rows in res.items() if kind.startswith("trace") for r in rows)
    md += ["", f"Lend events in the simulated traces: {lends} (P = 2: none possible, see the top)."]
    # ---- Theorem 3 on every simulated job of the apshim runs (Sen model), and where the single-job checks are
    worst = 0.0
    for (name, cfg, s_, kind), rows in res.items():
        if kind == "sen" and cfg.startswith("apshim"):
            for r in rows:
                worst = max(worst, int(r["response"]) / float(r["greedy_bound"]))
    md += ["", "## Single-job checks (Sen Theorem 3, speedup)", "",
           f"Every job of every simulated apshim run above (Sen model, {len(seeds)} seeds): largest "
           f"T / (T1/P̄ + T∞) = {worst:.3f} (P̄ = the job's average usage). One job alone at P = 1…64 "
           "(fib speedup near-linear, Theorem 3 within 0.2%): `results.md`, section *Validation*, and "
           "`speedup_fib.png`; closed-form unit tests (one job alone; two identical jobs under DP; native "
           "time-slicing; join at P, the two measures, confinement, lending): `sim_test.cpp`.", ""]
    md += DISCUSSION
    with open(os.path.join(a.out, "validation_p2.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    print(f"wrote {a.out}/validation_p2.md: within the real range: " +
          ", ".join(f"{k} {n_within[k]}/{len(verdict)}" for k in kinds))


if __name__ == "__main__":
    main()
