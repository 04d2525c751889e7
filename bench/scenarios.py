"""Named scenarios: which jobs arrive when, under which configurations.

A workload binary is bench/workloads' `wl_<name>_<runtime>` (runtime: tbb, omp_clang, omp_gcc);
every one prints `<name> <args> checksum=<c> time_s=<t>` and accepts `--threads N`.

A scenario function takes (build, P, quick) and returns a Scenario. Options on a Scenario:
  solo            run the jobs one after another, each alone (O1, O2, P3), instead of together
  analyses        extra tables and plots from bench/run.py's ANALYSES ("allprocs", "overhead",
                  "greedy", "calibration")
  trace_configs   configurations whose first repetition's traces are drawn (default: the first
                  apshim one)
  calibrate       (job index, fraction): before the repetitions, run that job alone under
                  `native` with --threads max(1, P/2) to measure T, then every job with
                  arrival_frac f arrives at f*T (Sen P1: C arrives at t = T/2)
  notes           text for summary.md, e.g. what P = 2 cannot show
  prepare         a function bench/run.py calls once before the repetitions (the real_*
                  scenarios write their programs' inputs with it)
Job(span_fraction=S/W) gives the analytic critical path as a fraction of the work: with T1
from the `one-worker` runs, T∞ = T1 * S/W and the greedy bound is T1/P̄ + T∞.
"""
import os
import subprocess
import tempfile


class Job:
    def __init__(self, name, argv, arrival_s=0.0, env=None, accepts_threads=True, span_fraction=None,
                 arrival_frac=None, ranks=False):
        self.name, self.argv, self.arrival_s = name, argv, arrival_s
        # Several processes at once, each a job of its own in the table (MPI ranks): a trace each.
        self.ranks = ranks
        self.env = env or {}
        self.accepts_threads = accepts_threads
        self.span_fraction = span_fraction
        self.arrival_frac = arrival_frac


class Scenario:
    def __init__(self, name, description, jobs, configs, reps, P, timeout_s=120, solo=False, analyses=(),
                 trace_configs=None, calibrate=None, notes="", prepare=None):
        self.name, self.description, self.jobs = name, description, jobs
        self.configs, self.reps, self.P, self.timeout_s = configs, reps, P, timeout_s
        self.solo, self.analyses, self.trace_configs = solo, list(analyses), trace_configs
        self.calibrate, self.notes, self.prepare = calibrate, notes, prepare
        self.calibrated_T = None
        self.P_override = False
        self.shim_lib = self.gat_path = self.trace_pattern = self.ranks_trace_pattern = None

    def max_concurrent(self):
        return 1 if self.solo else len(self.jobs)


# Analytic critical path / work (S/W) of the workloads (bench/workloads/README.md).
def fib_calls(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


def span_fib(n, cutoff):
    # calls on the longest path: one per level above the cutoff, then a serial fib(cutoff).
    c = max(cutoff, 1)
    return ((n - c) + (2 * fib_calls(c + 1) - 1)) / (2 * fib_calls(n + 1) - 1)


def span_loopy(n, units):
    # n spawns (negligible next to the work) then one task of `units`: S/W = 1/n.
    return 1.0 / n


def span_knary(n, k, r):
    nodes = (k ** n - 1) // (k - 1) if k > 1 else n
    s = min(r, k) + (1 if r < k else 0)
    span_nodes = (s ** n - 1) // (s - 1) if s > 1 else n
    return span_nodes / nodes


def span_phases(su, tasks, tu, reps):
    return (su + tu) / (su + tasks * tu)


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
                    jobs, ["native", "apshim", "apshim-inst", "apshim-asteal", "apshim-equi"], 2 if quick else 5, P,
                    analyses=["allprocs"], trace_configs=["apshim", "apshim-inst"])


P2_NOTE = ("P = 2 here: two jobs of two threads on two cores oversubscribe only mildly, so the "
           "effects of Sen's P = 16 experiment are small or absent; run with --P on a larger machine.")


def solo_jobs(build, quick, runtime="tbb"):
    """O1/O2/P3's jobs: parallelism far above P, each run alone (Sen Fig. 7-1's fib, loopy, knary)."""
    fib = (40, 12) if quick else (42, 12)
    loopy = (100, 5000) if quick else (200, 5000)
    knary = (8, 4, 1, 10) if quick else (9, 4, 1, 10)
    return [Job("fib", [wl(build, "fib", runtime)] + [str(x) for x in fib], span_fraction=span_fib(*fib)),
            Job("loopy", [wl(build, "loopy", runtime)] + [str(x) for x in loopy], span_fraction=span_loopy(*loopy)),
            Job("knary", [wl(build, "knary", runtime)] + [str(x) for x in knary],
                span_fraction=span_knary(*knary[:3]))]


EC = [1, 2, 5, 10, 25, 50, 100]


def o1_allprocs(build, P, quick=False):
    """Sen O1: all-procs time (from the job's start until all P workers are at work) against
    est_cycle, each job alone. apshim-equi (desire = P from the first cycle) is the reference a
    job with all processors from the start would see (Cilk's column in Sen Fig. 7-3)."""
    ec = [1, 5, 25, 100] if quick else EC
    return Scenario("o1_allprocs", "Sen O1: all-procs time against est_cycle; fib, loopy, knary (oneTBB) each alone.",
                    solo_jobs(build, quick), ["apshim-equi"] + [f"apshim-ec{m}" for m in ec], 2 if quick else 5, P,
                    solo=True, analyses=["allprocs"],
                    notes="All-procs time: the trace time (since the job's controller started) of the first "
                          "est_cycle in which the job's usage reached P. WSAP grows the desire by at most 1/eta "
                          "= 2x per cycle, so at least log2(P) cycles: 1 at P = 2. Run with --P 8 (APSHIM_P=8: "
                          "the table and oneTBB's CPU view have 8 processors on 2 cores) to see the climb.")


def o2_overhead(build, P, quick=False):
    """Sen O2: running time under the shim against est_cycle, as overhead over native."""
    ec = [1, 5, 25, 100] if quick else EC
    return Scenario("o2_overhead", "Sen O2: running-time overhead of the shim against est_cycle; fib, loopy, knary "
                    "(oneTBB) each alone.", solo_jobs(build, quick), ["native"] + [f"apshim-ec{m}" for m in ec],
                    2 if quick else 5, P, solo=True, analyses=["overhead"],
                    notes="Overhead = median running time under the shim / native - 1. A job alone joins at P "
                          "(since 2026-11-23; before, at desire 1, climbing, which large est_cycles showed); "
                          "what remains is measuring and the parking safe points.")


def o3_process_control(build, P, quick=False):
    """Sen O3: two LOOPY jobs with long tasks; the second arrives after the first reached all
    procs. The first job's workers finish their long task before they park, so for a while the
    workers exceed P. apshim-cap (each job limited to P/2 from the start) never exceeds P."""
    loopy = (4, 100000) if quick else (8, 200000)
    argv = [wl(build, "loopy", "tbb")] + [str(x) for x in loopy]
    jobs = [Job("loopy_a", argv, 0.0, span_fraction=span_loopy(*loopy)),
            Job("loopy_b", argv, 0.05, span_fraction=span_loopy(*loopy))]
    return Scenario("o3_process_control", "Sen O3: process control when workers exceed P: two LOOPY jobs (oneTBB) with "
                    f"{loopy[1] // 1000} ms tasks, the second arriving 50 ms after the first.", jobs,
                    ["native", "static", "apshim", "apshim-cap"], 2 if quick else 5, P,
                    notes="At P = 2 the excess is one worker (3 on 2 cores) for at most one task length; with "
                          "--P 4 or more the first job holds more workers (APSHIM_P on 2 cores oversubscribes "
                          "all configurations alike only under the shim, so compare apshim with apshim-cap).")


def p1_arrival(build, P, quick=False, half=False):
    """Sen P1: three identical fib jobs; A and B at t = 0, C at t = 0 or at T/2, T = one job's
    time on P/2 processors (measured before the repetitions)."""
    fib = ["41", "12"] if quick else ["43", "12"]
    argv = [wl(build, "fib", "tbb")] + fib
    sf = span_fib(int(fib[0]), int(fib[1]))
    jobs = [Job("A", argv, 0.0, span_fraction=sf), Job("B", argv, 0.0, span_fraction=sf),
            Job("C", argv, 0.0, span_fraction=sf, arrival_frac=0.5 if half else None)]
    name = "p1_arrival_half" if half else "p1_arrival_t0"
    return Scenario(name, f"Sen P1: three fib({fib[0]}) jobs (oneTBB); A and B at 0, C at "
                    f"{'T/2' if half else '0'}.", jobs, ["native", "static", "apshim", "apshim-cap"],
                    2 if quick else 5, P, calibrate=(0, 0.5) if half else None, analyses=["calibration"],
                    notes="Sen limited every job to P/2 (apshim-cap here). At P = 2 that is one worker: "
                          "apshim-cap then equals static, and the difference between fixed and dynamic "
                          "allotments is one processor; run with --P on a larger machine for Sen's picture.")


def p2_complementary(build, P, quick=False):
    """Sen P2 proper: job A runs a serial phase then a parallel phase, job B the reverse."""
    args = ["150000", "300", "1000", "1"] if quick else ["500000", "1000", "1000", "1"]
    argv = [wl(build, "phases", "tbb")] + args
    sf = span_phases(*[int(a) for a in args])
    jobs = [Job("A_serial_first", argv, 0.0, span_fraction=sf),
            Job("B_parallel_first", argv + ["--reverse"], 0.0, span_fraction=sf)]
    return Scenario("p2_complementary", "Sen P2: complementary parallelism profiles (oneTBB phases: A serial then "
                    "parallel, B parallel then serial).", jobs, ["native", "static", "apshim", "one-worker"],
                    2 if quick else 5, P, analyses=["greedy"],
                    notes="At P = 2 a job in its serial phase uses exactly its static share (1 = P/2), so "
                          "dynamic allotment has nothing to give back: expect apshim = static here. Sen's "
                          "30% gain needs P/2 > 1 (run with --P on a larger machine).")


def p3_greedy(build, P, quick=False):
    """Sen P3: running time under the shim (eta 0.75) against the greedy bound T1/P̄ + T∞."""
    return Scenario("p3_greedy", "Sen P3: the greedy-scheduling bound; fib, loopy, knary (oneTBB) each alone.",
                    solo_jobs(build, quick), ["one-worker", "native", "apshim-eta0.75", "apshim"],
                    2 if quick else 5, P, solo=True, analyses=["greedy"],
                    notes="T1 = median running time of the one-worker runs (--threads 1, alone); T∞ = T1 * "
                          "S/W with S/W the analytic critical path over work (fib: calls on the longest path, "
                          "loopy: 1/n, knary: span nodes / nodes); P̄ = mean usage over the trace's est_cycles.")


def fig7_4(build, P, quick=False):
    """Sen Fig. 7-4: LOOPY alone, all-procs time under WSAP and the instantaneous-parallelism
    estimator, against est_cycle."""
    loopy = (100, 5000) if quick else (200, 5000)
    ec = [1, 5, 25, 100]
    jobs = [Job("loopy", [wl(build, "loopy", "tbb")] + [str(x) for x in loopy], span_fraction=span_loopy(*loopy))]
    configs = [c for m in ec for c in (f"apshim-ec{m}", f"apshim-inst-ec{m}")]
    return Scenario("fig7_4", "Sen Fig. 7-4: LOOPY (oneTBB) alone, all-procs time: WSAP vs instantaneous "
                    "parallelism, against est_cycle.", jobs, configs, 2 if quick else 5, P, solo=True,
                    analyses=["allprocs"], trace_configs=["apshim-ec5", "apshim-inst-ec5"],
                    notes="At P = 2 the question is whether the inst estimator ever asks for the second "
                          "processor; run with --P 8 for the climb.")


def haselsteiner(build, P, quick=False, runtime="omp_clang"):
    """Haselsteiner's question: is a tuned backoff (idle threads sleep soon) as good as adaptive
    allotment? An OpenMP job with serial phases next to a parallel-for job: idle spinning
    threads of the first steal the second's cycles unless they back off."""
    phases = ["150000", "300", "1000", "2"] if quick else ["300000", "400", "1200", "3"]
    pfor = ["2000000", "30"] if quick else ["4000000", "40"]
    jobs = [Job("phases", [wl(build, "phases", runtime)] + phases, 0.0, span_fraction=span_phases(*map(int, phases))),
            Job("pfor", [wl(build, "pfor", runtime)] + pfor, 0.0)]
    configs = ["native", "passive", "backoff-1ms", "backoff-10ms", "backoff-50ms", "load_balance", "apshim",
               "apshim-equi", "apshim-dynamic"]
    if runtime != "omp_clang":
        configs.remove("load_balance")
    suffix = "" if runtime == "omp_clang" else "_gomp"
    return Scenario(f"haselsteiner{suffix}", f"Haselsteiner: tuned backoff vs adaptive allotment; OpenMP ({runtime}) "
                    "phases job next to a parallel-for job.", jobs, configs, 2 if quick else 5, P,
                    notes="native spins 200 ms (libomp) before sleeping, passive sleeps at once, backoff-N "
                          "spins N ms; backoff-1ms is the shim's own wait setting without its allotment, so "
                          "apshim vs the best backoff answers the question on this machine. oneTBB has no "
                          "backoff knob (its scheduler backs off by itself).")


MPI_KINDS = ("cp2kmpi",)  # real_job.py's programs started by mpirun: several ranks, each a job
REAL_JOB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "real_job.py")
REAL_NOTE = ("Unmodified Debian programs through bench/real_job.py (its output hashed into the checksum): gm = "
             "GraphicsMagick `convert -blur 0x24` x3 (OpenMP, libgomp), gmloop = a pipeline of short gm processes (10 "
             "x `convert -blur 0x24` of an 800x600 image, about 0.3 s each on 2 cores, each process a job of its own), numpy = tests/real/numpy_work.py (exact "
             "integer GEMMs on OpenMP OpenBLAS, ~300 ms pure-Python phases between them), flexbar = adapter "
             "removal (oneTBB), sklearn = tests/real/sklearn_work.py (scikit-learn gradient boosting: thousands "
             "of short OpenMP regions a second, libgomp loaded RTLD_LOCAL by python), opencv = tests/real/opencv_work.py "
             "(OpenCV image filters on oneTBB, both loaded RTLD_LOCAL by python), tesseract = OCR of a printed page "
             "(libgomp, teams of num_threads(4) for every LSTM step), xtb = semi-empirical quantum chemistry (caffeine "
             "optimized, then its frequencies: OpenMP on libgomp beside Debian's default pthreads OpenBLAS, whose own "
             "threads spin in sched_yield while they wait, OpenBLAS#3187; its results rounded before hashing, since its "
             "sums differ in the 12th digit with the thread count), cp2k = cp2k.psmp's PBE energy of two water molecules (libgomp; its energy to 1e-9 Ha), cp2kmpi = the same by two MPI ranks (`mpirun -np 2`, unbound unless `mpi-bind`; each rank a job; static: its --threads N split over the ranks, at least one each), rtsne = R's Rtsne on 4000 seeded points (libgomp; num_threads = the CPUs natively, P/2 static). rcppml = R's RcppML nmf() of a 2000 x 1500 seeded matrix (libgomp, and Eigen's parallel products, whose threads wait for each other in spin loops; setRcppMLthreads: 0 = the CPUs natively, P/2 static). gmx = GROMACS's mdrun, 1500 steps of 884 waters (libgomp, one rank, `-pin off`; its checksum: atoms, steps done, temperature near 300 K, since fewer threads give another trajectory). `native`: each program's default width (OpenMP: one thread per CPU; flexbar: "
             "`-n <CPUs>`, since its default is one thread), so the pair oversubscribes. `static`: each job limited "
             "to P/2 through its own knob, OMP_NUM_THREADS=P/2 for gm (and gmloop), OpenBLAS, scikit-learn and xtb and `flexbar -n P/2` (no "
             "taskset: the threads may still run on any CPU), cv2.setNumThreads(P/2) for OpenCV, OMP_THREAD_LIMIT=P/2 for "
             "tesseract (its num_threads(4) overrides OMP_NUM_THREADS). `backoff-1ms`: the shim's own spin-wait setting "
             "(GOMP_SPINCOUNT=1000) without it, to tell its allotment from its shorter spinning. `apshim`: plain "
             "LD_PRELOAD, OpenBLAS's libgomp loaded RTLD_LOCAL by python.")


def real_pair(build, P, quick=False, first="gm", second="numpy", configs=None):
    """Two real programs co-running (the second arrives 0.5 s later): native oversubscription vs a
    static split through the programs' own thread knobs vs apshim."""
    # Inputs outside the build (which may be someone else's read-only snapshot), cached per user.
    folder = os.path.join(tempfile.gettempdir(), f"apshim-real-inputs-{os.getuid()}" + ("-quick" if quick else ""))
    names = [first, second] if first != second else [f"{first}_a", f"{second}_b"]
    jobs = [Job(names[0], [REAL_JOB, first, folder], 0.0, ranks=first in MPI_KINDS),
            Job(names[1], [REAL_JOB, second, folder], 0.2 if quick else 0.5, ranks=second in MPI_KINDS)]

    def prepare():
        r = subprocess.run([REAL_JOB, "prepare", folder] + (["--quick"] if quick else []))
        if r.returncode != 0:
            raise SystemExit(f"real_job.py prepare {folder} failed")
    name = f"real_{first}_{second}"
    return Scenario(name, f"Real programs co-running: {first} and {second} (arriving later).", jobs,
                    configs or ["native", "static", "backoff-1ms", "apshim"], 2 if quick else 5, P, notes=REAL_NOTE,
                    prepare=prepare)


def real_solo(build, P, quick=False, kind="tesseract", configs=None):
    """One real program alone: what the shim does to a job nobody competes with (its idle
    processors), against a user's own thread limit (static: P threads; one-worker: 1)."""
    pair = real_pair(build, P, quick, kind, kind)
    job = Job(kind, pair.jobs[0].argv, 0.0, ranks=pair.jobs[0].ranks)
    return Scenario(f"real_{kind}", f"A real program alone: {kind}.", [job],
                    configs or ["native", "static", "one-worker", "apshim"], 2 if quick else 5, P, notes=REAL_NOTE,
                    prepare=pair.prepare)


def real_outside_hog(build, P, quick=False, kind="scipy"):
    """One real program alone in its table beside a CPU hog outside it (bench/real_job.py,
    BENCH_OUTSIDE_HOG): load no table sees, as a user's compile would make. Not `load_balance`
    (OMP_DYNAMIC=true): libgomp then gave OpenBLAS a team of one where OpenBLAS had split its work
    for omp_get_max_threads() = 2, and the one thread waited in sched_yield for its partner (still
    there after 11 minutes; bench/results/2026-11-30d-scipy-hog-dev2core). How much the hog
    takes from the job natively is the kernel's grouping's to decide (tests/support/cpu_hog.py):
    with autogroup, as on the dev VM, SciPy took 67.6 s natively; where the hog and the job share a
    cgroup and are not niced (CI's machine), 2.8 s (1.5 s with one thread)."""
    pair = real_pair(build, P, quick, kind, kind)
    job = Job(kind, pair.jobs[0].argv, 0.0, env={"BENCH_OUTSIDE_HOG": "1"})
    return Scenario(f"real_{kind}_hog", f"A real program alone beside a CPU hog outside the table: {kind}.", [job],
                    ["native", "one-worker", "apshim"], 2 if quick else 5, P, timeout_s=300,
                    notes=REAL_NOTE, prepare=pair.prepare)


ALL = {
    "real_gm_numpy": real_pair,
    "real_numpy_flexbar": lambda build, P, quick=False: real_pair(build, P, quick, "numpy", "flexbar"),
    "real_gm_gm": lambda build, P, quick=False: real_pair(build, P, quick, "gm", "gm"),
    # A pipeline of short gm processes (each a job of its own, each paying the shim's start) next to
    # a long gm run: what the start costs a co-runner (docs/enforcement.md, "Not done / open").
    "real_gmloop_gm": lambda build, P, quick=False: real_pair(build, P, quick, "gmloop", "gm",
                                                           ["native", "static", "apshim", "apshim-nocheck"]),
    # libgomp next to oneTBB, both real programs (no Python): what a 16-core run can carry.
    "real_gm_flexbar": lambda build, P, quick=False: real_pair(build, P, quick, "gm", "flexbar"),
    # Python users' case (issue #16): two NumPy processes on OpenMP OpenBLAS.
    "real_numpy_numpy": lambda build, P, quick=False: real_pair(build, P, quick, "numpy", "numpy"),
    # Two scikit-learn processes (e.g. two model fits side by side): short regions, spin-waits.
    "real_sklearn_sklearn": lambda build, P, quick=False: real_pair(build, P, quick, "sklearn", "sklearn"),
    # oneTBB reached only through Python's RTLD_LOCAL (OpenCV) next to libgomp's short regions, and next to gm.
    "real_opencv_sklearn": lambda build, P, quick=False: real_pair(build, P, quick, "opencv", "sklearn"),
    "real_opencv_gm": lambda build, P, quick=False: real_pair(build, P, quick, "opencv", "gm"),
    # tesseract: promised 4-thread teams of tiny regions, slower than one thread; alone and in pairs.
    "real_tesseract": real_solo,
    "real_tesseract_sklearn": lambda build, P, quick=False: real_pair(build, P, quick, "tesseract", "sklearn"),
    "real_tesseract_gm": lambda build, P, quick=False: real_pair(build, P, quick, "tesseract", "gm"),
    # xtb: an OpenMP program whose pthreads OpenBLAS oversubscribes it by itself (slower with two
    # threads than with one, natively); alone and beside gm.
    "real_xtb": lambda build, P, quick=False: real_solo(build, P, quick, "xtb"),
    "real_xtb_gm": lambda build, P, quick=False: real_pair(build, P, quick, "xtb", "gm"),
    # Two scientific programs nobody here wrote, both libgomp, found by the forty-seventh session's
    # sweep (tests/real/RESULTS.md): cp2k (quantum chemistry, long regions) beside Rtsne (R).
    "real_cp2k_rtsne": lambda build, P, quick=False: real_pair(build, P, quick, "cp2k", "rtsne",
                                                            ["native", "static", "apshim"]),
    # MPI + OpenMP: cp2k.psmp's two ranks unbound (each a job of its own, each starting a thread per
    # CPU), alone and beside gm's blur, against one thread per rank (static) and Open MPI's binding.
    "real_cp2kmpi": lambda build, P, quick=False: real_solo(build, P, quick, "cp2kmpi",
                                                         ["native", "static", "mpi-bind", "apshim"]),
    "real_cp2kmpi_gm": lambda build, P, quick=False: real_pair(build, P, quick, "cp2kmpi", "gm",
                                                            ["native", "static", "mpi-bind", "apshim"]),
    # GROMACS (molecular dynamics, libgomp: its threads meet several times a step) beside gm's
    # blur: a real program that a co-runner on one of its CPUs stalls at every step.
    "real_gmx_gm": lambda build, P, quick=False: real_pair(build, P, quick, "gmx", "gm"),
    # R's RcppML (Eigen's parallel products spin at their meetings: docs/enforcement.md, ninetieth
    # session) beside gm's blur.
    "real_rcppml_gm": lambda build, P, quick=False: real_pair(build, P, quick, "rcppml", "gm"),
    # SciPy on OpenMP OpenBLAS alone beside a CPU hog outside the table: a team that meets at every
    # short region's end, one of its CPUs shared with load the table does not see.
    "real_scipy_hog": real_outside_hog,
    "loopy_inst": loopy_inst,
    "phases_pair": phases_pair,
    "tbb_pair": tbb_pair,
    "omp_pair": omp_pair,
    "gomp_pair": lambda build, P, quick=False: omp_pair(build, P, quick, runtime="omp_gcc"),
    "mixed_pair": mixed_pair,
    "overhead_fib_tbb": overhead,
    "overhead_fibcut_tbb": lambda build, P, quick=False: overhead(build, P, quick, "fibcut"),
    "overhead_pfor_tbb": lambda build, P, quick=False: overhead(build, P, quick, "pfor"),
    "overhead_fibcut_omp": lambda build, P, quick=False: overhead(build, P, quick, "fibcut", "omp_clang"),
    "overhead_pfor_omp": lambda build, P, quick=False: overhead(build, P, quick, "pfor", "omp_clang"),
    "overhead_fibcut_gomp": lambda build, P, quick=False: overhead(build, P, quick, "fibcut", "omp_gcc"),
    "overhead_pfor_gomp": lambda build, P, quick=False: overhead(build, P, quick, "pfor", "omp_gcc"),
    "o1_allprocs": o1_allprocs,
    "o2_overhead": o2_overhead,
    "o3_process_control": o3_process_control,
    "p1_arrival_t0": p1_arrival,
    "p1_arrival_half": lambda build, P, quick=False: p1_arrival(build, P, quick, half=True),
    "p2_complementary": p2_complementary,
    "p3_greedy": p3_greedy,
    "fig7_4": fig7_4,
    "haselsteiner": haselsteiner,
    "haselsteiner_gomp": lambda build, P, quick=False: haselsteiner(build, P, quick, runtime="omp_gcc"),
}
