#!/usr/bin/python3
"""Validate the simulator against the real P = 2 benchmark runs (issue #7 item 2).

usage: bench/sim/validate.py [--sim PATH] [--real DIR] [--out DIR] [--seeds N]

For every bench scenario whose jobs the simulator can model (fib, pfor, phases, loopy), this
  1. calibrates each job's one-processor work T1 (seconds) from real single-job data (see CALIBRATION),
  2. builds a simulator dag of that T1 (1 step = STEP_US microseconds),
  3. simulates the scenario at P = 2 under the modelled configurations (native = every job runs P
     workers and the OS time-slices them; static = P / jobs workers each; apshim = WSAP + DP with
     est_cycle 5 ms, eta 0.5; apshim-inst / -asteal / -equi = the other estimators), N seeds,
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
REAL = os.path.join(ROOT, "bench", "results", "2026-11-22-dev2core")

P = 2
STEP_US = 2.0                      # one simulator step = 2 us of one core
EST_CYCLE_MS, ETA = 5.0, 0.5       # the shim's defaults, used by every real apshim run
PHI = (1 + 5 ** 0.5) / 2


def steps(seconds):
    return int(round(seconds * 1e6 / STEP_US))


# ------------------------------------------------------------------------------- real data
def read_raw(scenario):
    rows = list(csv.DictReader(open(os.path.join(REAL, scenario, "raw.csv"))))
    resp = defaultdict(dict)                      # (config, rep) -> {job: response_s}
    start = defaultdict(dict)
    for r in rows:
        resp[(r["config"], int(r["rep"]))][r["job"]] = float(r["response_s"])
        start[(r["config"], int(r["rep"]))][r["job"]] = float(r["start_s"])
    return resp, start


def median_of(scenario, config, job):
    resp, _ = read_raw(scenario)
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
    return cal, u_us, over


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
# Idle waiting of each runtime before an idle thread blocks (runtime-aware variant, --idle-block):
# oneTBB workers spin briefly then sleep (assumed 100 us); libomp spins KMP_BLOCKTIME = 200 ms;
# libgomp spins GOMP_SPINCOUNT = 300,000 pause loops when OMP_WAIT_POLICY is unset (assumed 10 ms).
IDLE_S = {"tbb": 100e-6, "omp_clang": 0.2, "omp_gcc": 0.01}
PARK_VALVE_S = 0.2   # oneTBB adapter: one stay in the parking lot lasts at most 200 ms


def scenarios(cal, u_us):
    fib_tbb = fib_dag(cal["fib_tbb"][0])
    pfor = pfor_dag(cal["pfor"][0], 60)
    return {
        "tbb_pair": {"jobs": [("fib", fib_tbb, 0.0, "fib_tbb"), ("pfor", pfor, 0.5, "pfor")],
                     "configs": ["native", "static", "apshim"], "runtime": "tbb"},
        "phases_pair": {"jobs": [("phases", phases_dag(u_us), 0.0, "phases"), ("pfor", pfor, 0.0, "pfor")],
                        "configs": ["native", "static", "apshim"], "runtime": "tbb"},
        "omp_pair": {"jobs": [("fib", fib_dag(cal["fib_omp_clang"][0]), 0.0, "fib_omp"), ("pfor", pfor, 0.5, "pfor")],
                     "configs": ["native", "passive", "static", "load_balance", "apshim"], "runtime": "omp_clang"},
        "gomp_pair": {"jobs": [("fib", fib_dag(cal["fib_omp_gcc"][0]), 0.0, "fib_omp"), ("pfor", pfor, 0.5, "pfor")],
                      "configs": ["native", "passive", "static", "apshim"], "runtime": "omp_gcc"},
        # one global idle rule: oneTBB's, the fib job's runtime (pfor_omp idles only at loop ends)
        "mixed_pair": {"jobs": [("fib_tbb", fib_tbb, 0.0, "fib_tbb"), ("pfor_omp", pfor, 0.5, "pfor")],
                       "configs": ["native", "passive", "static", "apshim"], "runtime": "tbb"},
        "loopy_inst": {"jobs": [("loopy", loopy_dag(u_us), 0.0, "loopy"),
                                ("pfor", pfor_dag(cal["pfor_small"][0], 30), 0.0, "pfor")],
                       "configs": ["native", "apshim", "apshim-inst", "apshim-asteal", "apshim-equi"], "runtime": "tbb"},
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
    """variant "sen": Sen's model (safe points at every task boundary, idle workers spin, no shim
    cost). "rt": runtime-aware: idle threads block after the runtime's spin time (every
    configuration), and under apshim oneTBB's safe points (a worker parks only after an outermost
    task, 200 ms valve) and each job's measured shim cost (`overhead`)."""
    jobs = []
    for name, spec, arr, kind in sc["jobs"]:
        if variant == "rt" and config.startswith("apshim") and overhead is not None:
            spec = scaled(spec, overhead.get(kind, 1.0))
        jobs.append(f"{spec}@{steps(arr)}")
    extra = []
    if variant == "rt":
        extra += ["--idle-block", steps(IDLE_S[sc["runtime"]])]
        if config.startswith("apshim") and sc["runtime"] == "tbb":
            extra += ["--outermost-only", "--park-valve", steps(PARK_VALVE_S)]
    args = ["--P", P, "--est-cycle", steps(EST_CYCLE_MS / 1000), "--eta", ETA, "--seed", seed,
            *SIM_ARGS[config], *extra, "--jobs", ",".join(jobs), "--out", "trace" if trace else "jobs"]
    return args


def fmt_range(v):
    return f"{st.median(v):.2f} [{min(v):.2f}-{max(v):.2f}]"


DISCUSSION = """## Reading: where the simulator agrees, and why it does not elsewhere

**Calibration is not validation.** T1 of the oneTBB fib and of pfor comes from the single-job runs
(`overhead_*`), independent of the pair scenarios; the static one-thread responses then agree within
1% (calibration table), which also shows the 2 cores give linear speedup to these jobs. phases/static
and the OpenMP fibs' static times ARE the calibration (marked), so those static rows test only the
co-runner's share.

**oneTBB scenarios (tbb_pair, mixed_pair, phases_pair, loopy_inst): the runtime-aware model
reproduces the real runs.** Under apshim the per-job responses agree within 1% for tbb_pair
(fib 3.552 s sim vs 3.562 s real, pfor 4.096 vs 4.070; native within 4%), and the apshim ratios
land inside the real range for tbb_pair and mixed_pair, within 0.02 of it for phases_pair and
loopy_inst. Sen's plain model misses them for three reasons, each a mechanism the real runs show:
1. *Idle threads*: in the plain model an idle worker steals for ever, so in oversubscribed
   `native` runs it takes a time slice from the co-runner; real oneTBB workers block after a short
   spin. This alone made sim `native` 1-17% too slow (phases_pair: 2.764 s vs 2.353 s real; with
   blocking 0-4%), which shifted every ratio in those scenarios.
2. *Safe points*: Sen's workers sleep at any task boundary, so fib is held to its allotment of 1
   the moment pfor arrives. The oneTBB adapter parks a worker only when it returns from an
   OUTERMOST task (adapters/tbb/README.md), and in a recursive fib a stolen task is a whole
   subtree lasting seconds; a parked worker also leaves after at most 200 ms. The real fib trace
   shows it: `busy` is 1.68 processors on average while its allotment is 1 (last column of
   the trace table above). So fib keeps both threads, 3 threads share 2 cores, and pfor gets less
   than the one processor the plain model gives it (pfor 3.600 s sim vs 4.070 s real).
3. *Shim cost*: fib(45,12) alone runs 1.24x slower under the shim (ITT callbacks on ~5 M tasks);
   pfor 1.01x. The plain model has no per-task cost.
With (1)-(3) switched on (none of them fitted to the pair data: spin times assumed from the
runtimes' documentation, the valve from the adapter's code, the cost from the single-job runs) the tbb_pair and mixed_pair apshim
responses move from 1.00 to 1.09 (real 1.08-1.12 and 1.09-1.13). Remaining gaps: phases native (real phases job
1.768 s, sim 1.931 s: the real serial phase lost less to the pfor threads than fair per-thread
time-slicing gives it; the OS scheduler is not modelled beyond fair shares), hence the phases_pair
ratios (the apshim ABSOLUTE mean response agrees: 2.299 s real, 2.296 s sim); loopy_inst rows differ
by at most 0.02, the size of the real spread (the real pfor in native was 0.1 s slower than the
model, memory bandwidth shared with the co-runner is not modelled).

**Allotment traces agree** (plot; share of estimates at allotment 2 per job within 0.05 for the
oneTBB scenarios): fib alone ramps to 2 at the first estimate, both jobs hold 1 while together,
the survivor gets 2 at the next estimate after the other leaves. One real detail the model cannot
show: the phases job's desire drops to 1 during its serial phases (33% of its estimates) because
the shim counts only time inside TBB task bodies as busy, and serial main-thread code is not;
the simulator counts the serial phase as work. And the real phases job joins the table only
at its first TBB use (the controller starts lazily), after its first serial phase, so the real pfor
holds 2 processors for the first ~0.25 s; the simulator's jobs join at arrival (the real phases
trace is plotted shifted by that serial phase, 0.156 s at the calibrated unit). At P = 2 this changes no allotment (DP keeps every
job at >= 1 processor), so it costs nothing here; at larger P the shim gives a serial phase's
processors away at once, where WSAP on the true busy time would halve the desire per estimate.

**OpenMP fib (omp_pair, gomp_pair): the model does not apply, and says why.** OpenMP tasking
does much more work with 2 threads than with 1: the one-thread (static) fib takes 1.818 s (libomp)
/ 1.209 s (libgomp), but the native pair implies 4.0 s / 3.4 s of fib work at 2 threads (fib alone
on 2 cores for 0.5 s, then a fair half of them: T1 = 1.0 + response - 0.5), 2.2-2.8x more (task
queue locking, taskwait polling, and idle threads spinning KMP_BLOCKTIME / GOMP_SPINCOUNT while the
co-runner wants the core). The simulator's work is independent of the thread count, so with T1
calibrated on one thread it predicts the native fib 2.6x (libomp) / 4x (libgomp) too fast, static 1.56/1.84x slower than native
where the real static split is 1.05/0.90, and apshim = native. The real traces agree on the shape
(2, then 1/1, then 2) but the sim fib leaves far earlier. The passive / load_balance rows differ
from native only in idle waiting, which the model has only as a block-after-spin delay; the real
0.83 for libgomp passive is most likely that spinning. Modelling this needs a per-runtime cost per task that
grows with the number of threads, i.e. a measurement of the OpenMP runtimes, not of the
scheduler; the shim's trace shows busy 2.0 processors for these fibs at allotment 1, which is
either the team not shrinking inside one long region with nested tasks or parked time inside a
task body counted as busy; the traces alone cannot tell which.

**Not modelled at all**: memory bandwidth and cache sharing (pfor: 64 MB of arrays), time-slice
granularity and scheduler heuristics (the model shares processors fairly every 2 us step),
process start-up and input generation (inside the real response times, inside T1 here through the
calibration), the controller thread's CPU time.
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
    cal, u_us, over = calibration()
    scs = scenarios(cal, u_us)
    seeds = list(range(1, a.seeds + 1))

    # Every simulation, in parallel (2 at a time: the machine is shared).
    calls = {}
    for name, sc in scs.items():
        for cfg in sc["configs"]:
            for s in seeds:
                calls[(name, cfg, s, "model")] = sim_call(sc, cfg, s)
                calls[(name, cfg, s, "rt")] = sim_call(sc, cfg, s, "rt", overhead=over)
        calls[(name, "apshim", 1, "trace")] = sim_call(sc, "apshim", 1, trace=True)
        calls[(name, "apshim", 1, "trace-rt")] = sim_call(sc, "apshim", 1, "rt", overhead=over, trace=True)
    with cf.ThreadPoolExecutor(max_workers=2) as pool:
        res = dict(zip(calls, pool.map(run_sim, calls.values())))

    def sim_mean_resp(name, cfg, s, kind="model"):
        rows = res[(name, cfg, s, kind)]
        return st.mean(int(r["response"]) for r in rows) * STEP_US * 1e-6

    def sim_job_resp(name, cfg, kind="model"):
        per = defaultdict(list)
        for s in seeds:
            for (jn, *_), r in zip(scs[name]["jobs"], res[(name, cfg, s, kind)]):
                per[jn].append(int(r["response"]) * STEP_US * 1e-6)
        return {k: st.median(v) for k, v in per.items()}

    md = ["# Simulator vs real runs at P = 2 (issue #7 item 2)", "",
          f"Generated by `bench/sim/validate.py` from `{os.path.relpath(REAL, ROOT)}` (real: 5 interleaved "
          f"repetitions per configuration) and the simulator ({len(seeds)} seeds per configuration). "
          f"P = 2, 1 step = {STEP_US:g} us, est_cycle {EST_CYCLE_MS:g} ms = {steps(EST_CYCLE_MS / 1000)} steps, "
          f"eta {ETA}, steal attempt 1 step.", "",
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
    md += ["", f"Shim cost per job used by the *runtime-aware* simulation of apshim (apshim alone / native alone, medians of "
               f"9 runs): oneTBB fib(45,12) {over['fib_tbb']:.3f}, pfor {over['pfor']:.3f}; the other jobs "
               f"(coarse tasks: loopy 8000 units, phases 1200 units; OpenMP fib: no single-job run) 1.000.", ""]

    # ---- side-by-side table
    md += ["## Mean response time, ratio to native (median [min-max]; real: per repetition, sim: per seed)", "",
           "*sim (Sen)*: the simulator as in `reproduce.py` (sleep at any task boundary, idle workers spin, "
           "no shim cost). *sim (runtime-aware)*: idle threads block after their runtime's spin time, and "
           "under apshim oneTBB jobs park only after an outermost task (200 ms valve) and every job's work "
           "is scaled by its measured shim cost. *within*: the sim median lies in the real [min-max].", "",
           "| scenario | configuration | real | sim (Sen) | within? | sim (runtime-aware) | within? | "
           "real mean response (s) | sim (Sen) (s) | sim (r.-a.) (s) |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    csv_rows = []
    verdict = {}
    for name, sc in scs.items():
        for cfg in sc["configs"]:
            rr = real_ratios(name, cfg)
            lo, hi = min(rr), max(rr)
            cols, row = [], {}
            for kind in ("model", "rt"):
                sr = [sim_mean_resp(name, cfg, s, kind) / sim_mean_resp(name, "native", s, kind) for s in seeds]
                inside = lo <= st.median(sr) <= hi
                cols.append((sr, inside, st.median(sim_mean_resp(name, cfg, s, kind) for s in seeds)))
                row[kind] = (st.median(sr), min(sr), max(sr), inside, cols[-1][2])
            verdict[(name, cfg)] = (st.median(rr), cols[0][1], cols[1][1])
            note = " (= native in the model)" if cfg in ("passive", "load_balance") else ""
            real_abs = st.median(real_mean_resp(name, cfg))
            md.append(f"| {name} | {cfg}{note} | {fmt_range(rr)} | {fmt_range(cols[0][0])} | "
                      f"{'yes' if cols[0][1] else 'no'} | {fmt_range(cols[1][0])} | {'yes' if cols[1][1] else 'no'} | "
                      f"{real_abs:.3f} | {cols[0][2]:.3f} | {cols[1][2]:.3f} |")
            csv_rows.append({"scenario": name, "config": cfg, "real_ratio_median": f"{st.median(rr):.4f}",
                             "real_ratio_min": f"{lo:.4f}", "real_ratio_max": f"{hi:.4f}",
                             **{f"sim_{k}_{f}": (f"{v:.4f}" if isinstance(v, float) else int(v))
                                for k in ("model", "rt") for f, v in zip(("ratio_median", "ratio_min", "ratio_max",
                                                                         "within", "mean_response_s"), row[k])},
                             "real_mean_response_s": f"{real_abs:.4f}"})
    with open(os.path.join(a.out, "validation_p2.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(csv_rows[0]))
        w.writeheader()
        w.writerows(csv_rows)

    # ---- per-job responses
    md += ["", "## Median response time per job (s): real / sim (Sen) / sim (runtime-aware)", "",
           "| scenario | configuration | job 1 | job 2 |", "|---|---|---|---|"]
    for name, sc in scs.items():
        resp, _ = read_raw(name)
        sj = {(cfg, k): sim_job_resp(name, cfg, k) for cfg in sc["configs"] for k in ("model", "rt")}
        for cfg in sc["configs"]:
            cells = []
            for jn, *_ in sc["jobs"]:
                real = st.median(v[jn] for (c, _r), v in resp.items() if c == cfg)
                cells.append(f"{jn}: {real:.3f} / {sj[(cfg, 'model')][jn]:.3f} / {sj[(cfg, 'rt')][jn]:.3f}")
            md.append(f"| {name} | {cfg} | " + " | ".join(cells) + " |")

    # ---- traces plot
    names = list(scs)
    fig, axes = plt.subplots(len(names), 3, figsize=(15, 2.1 * len(names)), sharey=True)
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

    for row, name in enumerate(names):
        sc = scs[name]
        _, start = read_raw(name)
        # Trace times count from the job's controller start, which is lazy (first use of its runtime):
        # phases starts with a serial phase that uses no TBB, so its trace begins after it.
        real = [(jn, start[("apshim", 0)][jn] + (300000 * u_us * 1e-6 if jn == "phases" else 0.0),
                 list(csv.DictReader(open(os.path.join(REAL, name, f"trace-apshim-r0-{jn}.csv")))))
                for jn, *_ in sc["jobs"]]
        tmax = draw(axes[row][0], real, "time_ms", "allotment", "desire", 1e-3)
        for col, kind in ((1, "trace"), (2, "trace-rt")):
            tr = res[(name, "apshim", 1, kind)]
            series = [(jn, 0.0, [r for r in tr if int(r["job"]) == i]) for i, (jn, *_) in enumerate(sc["jobs"])]
            tmax = max(tmax, draw(axes[row][col], series, "t", "allot", "desire", STEP_US * 1e-6))
        for ax, what in zip(axes[row], ("real (rep 0)", "sim, Sen model (seed 1)", "sim, runtime-aware (seed 1)")):
            ax.set_title(f"{name}: {what}", fontsize=9)
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
    fig.savefig(os.path.join(a.out, "validation_p2_traces.png"), dpi=90)
    plt.close(fig)

    # ---- trace agreement numbers
    md += ["", "## Allotment traces (apshim): real rep 0 vs simulated seed 1", "",
           "`validation_p2_traces.png` plots them side by side. Share of each job's estimates at which "
           "its desire / allotment was 2 (the rest: 1); real / sim (Sen) / sim (runtime-aware):", "",
           "| scenario | job | desire 2 | allotment 2 | estimates | real: mean `busy` while allotment 1 |",
           "|---|---|---|---|---|---|"]
    fr = lambda rows, k: sum(int(r[k]) >= 2 for r in rows) / max(1, len(rows))  # noqa: E731
    for name, sc in scs.items():
        for i, (jn, *_) in enumerate(sc["jobs"]):
            real = list(csv.DictReader(open(os.path.join(REAL, name, f"trace-apshim-r0-{jn}.csv"))))
            m = [r for r in res[(name, "apshim", 1, "trace")] if int(r["job"]) == i]
            q = [r for r in res[(name, "apshim", 1, "trace-rt")] if int(r["job"]) == i]
            md.append(f"| {name} | {jn} | {fr(real, 'desire'):.2f} / {fr(m, 'desire'):.2f} / {fr(q, 'desire'):.2f} | "
                      f"{fr(real, 'allotment'):.2f} / {fr(m, 'allot'):.2f} / {fr(q, 'allot'):.2f} | "
                      f"{len(real)} / {len(m)} / {len(q)} | "
                      f"{st.mean([float(r['busy']) for r in real if r['allotment'] == '1'] or [0]):.2f} |")
    # ---- Theorem 3 on every simulated job of the apshim runs (Sen model), and where the single-job checks are
    worst = 0.0
    for (name, cfg, s_, kind), rows in res.items():
        if kind == "model" and cfg.startswith("apshim"):
            for r in rows:
                worst = max(worst, int(r["response"]) / float(r["greedy_bound"]))
    md += ["", "## Single-job checks (Sen Theorem 3, speedup)", "",
           f"Every job of every simulated apshim run above (Sen model, {len(seeds)} seeds): largest "
           f"T / (T1/P̄ + T∞) = {worst:.3f} (P̄ = the job's average usage). One job alone at P = 1…64 "
           "(fib speedup near-linear, Theorem 3 within 0.2%): `results.md`, section *Validation*, and "
           "`speedup_fib.png`; closed-form unit tests (one job alone; two identical jobs under DP; native "
           "time-slicing): `sim_test.cpp`.", ""]
    md += DISCUSSION
    with open(os.path.join(a.out, "validation_p2.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    n_s = sum(v[1] for v in verdict.values())
    n_r = sum(v[2] for v in verdict.values())
    print(f"wrote {a.out}/validation_p2.md: within the real range: Sen model {n_s}/{len(verdict)}, "
          f"runtime-aware {n_r}/{len(verdict)}")


if __name__ == "__main__":
    main()
