#!/usr/bin/python3
"""One unmodified Debian program as a bench job (bench/scenarios.py's real_* scenarios), in the
workloads' convention: a trailing `--threads N` (bench/configs.py: static split, one-worker,
apshim-cap) becomes the program's own knob, and the job prints one line
`<name> ... checksum=<c> time_s=<t>` (checksum: SHA-256 prefix of the program's output).

    real_job.py prepare DIR [--quick]           writes the inputs (deterministic) into DIR
    real_job.py gm DIR [--threads N]            gm convert DIR/in.ppm -blur 0x24 x3 (OpenMP, libgomp)
    real_job.py gmloop DIR [--threads N]        a pipeline: 10 short gm processes in a row (quick: 5),
                                                each `gm convert DIR/small.ppm -blur 0x24`, about 0.3 s
    real_job.py numpy DIR [--threads N]         tests/real/numpy_work.py on OpenMP OpenBLAS
    real_job.py scipy DIR [--threads N]         tests/real/scipy_work.py (SciPy's LAPACK, BLAS, FFT) on it
    real_job.py flexbar DIR [--threads N]       flexbar (oneTBB) adapter removal on DIR/reads.fastq
    real_job.py sklearn DIR [--threads N]       tests/real/sklearn_work.py: scikit-learn gradient boosting
    real_job.py opencv DIR [--threads N]        tests/real/opencv_work.py: OpenCV filters (oneTBB, via Python)
    real_job.py tesseract DIR [--threads N]     tesseract OCR of DIR/page.png (OpenMP, libgomp, num_threads(4))
    real_job.py xtb DIR [--threads N]           xtb: caffeine's geometry optimized, then its frequencies
                                                (quick: optimized only; OpenMP on libgomp beside Debian's
                                                default pthreads OpenBLAS)
    real_job.py cp2k DIR [--threads N]          cp2k.psmp: the PBE energy of two water molecules (OpenMP,
                                                libgomp; one MPI rank, no mpirun); quick too (one molecule
                                                takes longer: more SCF steps)
    real_job.py cp2kmpi DIR [--threads N]       the same energy by two MPI ranks of cp2k.psmp, each an OpenMP
                                                process (`mpirun -np 2`), unbound unless the environment
                                                binds them (OMPI_MCA_hwloc_base_binding_policy; the
                                                `mpi-bind` configuration): each rank a job of its own
    real_job.py rtsne DIR [--threads N]         R's Rtsne (OpenMP, libgomp): 4000 x 30 points, 400 iterations
                                                (quick: 2000, 250)
    real_job.py rcppml DIR [--threads N]        R's RcppML nmf() (OpenMP, libgomp, and Eigen's parallel products
                                                compiled in): a 2000 x 1500 matrix, half zeros, rank 30, 30
                                                iterations, 2 seeds (quick: 1000 x 750, 1 seed)
    real_job.py gmx DIR [--threads N]           GROMACS mdrun (OpenMP, libgomp; one rank): 1500 steps of a
                                                box of 884 waters (quick: 400), prepared by `prepare`
                                                where gmx is installed

Without --threads each program does what it does by default on this machine: gm, OpenBLAS and
scikit-learn start one OpenMP thread per CPU; flexbar (default one thread) gets `-n <CPUs>`, what
a user would type; OpenCV runs its oneTBB arena at one thread per CPU; tesseract's teams have 4
threads whatever the CPUs (num_threads(4)). With --threads N: OMP_NUM_THREADS=N (gm, OpenBLAS,
scikit-learn), `flexbar -n N`, cv2.setNumThreads(N) (OpenCV), OMP_THREAD_LIMIT=N (tesseract, whose
num_threads clause overrides OMP_NUM_THREADS: the knob its users are told to set),
OMP_NUM_THREADS=N for xtb (which its pthreads OpenBLAS reads too) and cp2k (N/2 for each of cp2kmpi's
two ranks: N threads in all; without --threads, one per CPU for each rank), Rtsne's num_threads
argument (one per CPU without --threads: the package's default is one thread, so a user who wants
it parallel names a count), RcppML's setRcppMLthreads (its default, 0, is one per CPU), `gmx mdrun -ntomp N` (GROMACS: one OpenMP thread per CPU without it).
The inputs' sizes (written by `prepare`, --quick for smaller ones) decide the run times: about 2-5 s each
alone natively on 2 idle cores (quick: about 1 s).
"""
import contextlib
import hashlib
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REAL_TESTS = os.path.join(HERE, "..", "tests", "real")
sys.path.insert(0, REAL_TESTS)
sys.path.insert(0, os.path.join(HERE, "..", "tests", "support"))
from cpu_hog import OutsideHog  # noqa: E402

OPENBLAS_OPENMP = "/usr/lib/x86_64-linux-gnu/openblas-openmp"
GMX = "/usr/bin/gmx"
# The Python that runs tests/real's NumPy, scikit-learn and OpenCV work: Debian's, unless
# BENCH_PYTHON names another (a machine whose scikit-learn lives in a virtual environment).
PYTHON = os.environ.get("BENCH_PYTHON", "/usr/bin/python3")
NUMPY_ARGS = {False: ["2800", "6", "4000000"], True: ["1200", "4", "600000"]}
SCIPY_ARGS = {False: ["1300"], True: ["650"]}
SKLEARN_ARGS = {False: ["60000", "150"], True: ["20000", "60"]}
OPENCV_ROUNDS = {False: "12", True: "4"}
GM_SIZE = {False: (1600, 1200), True: (800, 600)}
READS = {False: 50000, True: 15000}
PAGE_LINES = {False: 40, True: 15}
GM_OPS = ["-blur", "0x24"] * 3
# gmloop: a shell loop's worth of short processes, each a job of its own under the shim (its start,
# docs/enforcement.md, is paid by every one of them).
SMALL_SIZE = (800, 600)
LOOP_RUNS = {False: 10, True: 5}
# BENCH_REPEAT=N runs the program N times in a row as one job (a batch): on a machine with many
# more cores than the 2 the inputs were sized for, jobs that end in half a second barely overlap.
REPEAT = max(1, int(os.environ.get("BENCH_REPEAT", "1")))
# BENCH_OUTSIDE_HOG=1: a process outside the shim and its table (no LD_PRELOAD, no APSHIM_*) spins
# on one CPU for as long as the job runs, as a user's compile or browser would: load no table sees.
HOG = os.environ.get("BENCH_OUTSIDE_HOG") == "1"
MPI_RANKS = 2  # cp2kmpi's
# BENCH_WIDTH=N: without --threads, each program runs N threads instead of one per CPU
# (OMP_NUM_THREADS=N, `flexbar -n N`, cv2.setNumThreads(N)), as a program sized for a machine with
# N cores runs here. bench/run.py drops the caller's OMP_* variables, so this is the way to ask.
WIDTH = int(os.environ["BENCH_WIDTH"]) if os.environ.get("BENCH_WIDTH") else None


# xtb's molecule: caffeine, 24 atoms (Angstrom), small enough to need no prepared input file.
CAFFEINE = """24
caffeine
C 1.0400 0.0640 -0.0130
N 2.4950 0.0080 -0.0100
C 3.2530 1.1360 -0.0100
N 4.5460 0.8080 -0.0050
C 4.6110 -0.5710 -0.0020
C 3.3270 -1.0670 -0.0040
C 3.0960 -2.4680 0.0000
O 1.9700 -2.9660 -0.0010
N 4.2120 -3.2750 0.0030
C 4.0370 -4.7340 0.0070
C 5.4960 -2.7410 0.0050
O 6.4990 -3.4610 0.0080
N 5.6750 -1.3820 0.0020
C 7.0180 -0.8080 0.0050
H 0.6760 -0.9640 -0.0130
H 0.6860 0.5850 0.8810
H 0.6820 0.5830 -0.9040
H 2.8820 2.1500 -0.0130
H 3.5080 -5.0470 0.9080
H 3.5100 -5.0520 -0.8920
H 5.0200 -5.2040 0.0090
H 7.5800 -1.1410 0.8800
H 7.5780 -1.1450 -0.8680
H 6.9570 0.2800 0.0040
"""


# cp2k's input: a PBE/DZVP energy of two water molecules in a 9 A cell.
CP2K_INPUT = """&GLOBAL
  PROJECT h2o
  RUN_TYPE ENERGY
  PRINT_LEVEL LOW
&END GLOBAL
&FORCE_EVAL
  METHOD QS
  &DFT
    BASIS_SET_FILE_NAME BASIS_MOLOPT
    POTENTIAL_FILE_NAME GTH_POTENTIALS
    &MGRID
      CUTOFF 300
      REL_CUTOFF 40
    &END MGRID
    &SCF
      EPS_SCF 1.0E-7
      MAX_SCF 50
    &END SCF
    &XC
      &XC_FUNCTIONAL PBE
      &END XC_FUNCTIONAL
    &END XC
  &END DFT
  &SUBSYS
    &CELL
      ABC 9.0 9.0 9.0
    &END CELL
    &COORD
{coords}
    &END COORD
    &KIND H
      BASIS_SET DZVP-MOLOPT-SR-GTH
      POTENTIAL GTH-PBE-q1
    &END KIND
    &KIND O
      BASIS_SET DZVP-MOLOPT-SR-GTH
      POTENTIAL GTH-PBE-q6
    &END KIND
  &END SUBSYS
&END FORCE_EVAL
"""
WATERS = ["O 0.000000 0.000000 -0.065587", "H 0.000000 -0.757136 0.520545", "H 0.000000 0.757136 0.520545",
          "O 3.000000 0.300000 0.100000", "H 3.600000 -0.400000 0.300000", "H 3.500000 1.000000 0.300000"]
# Rtsne: a seeded 30-dimensional cloud with a shifted half; the embedding's size and last cost,
# printed to 1e-6 (the same at any thread count on the dev VM, tests/real/RESULTS.md).
RTSNE_SCRIPT = """library(Rtsne)
args <- commandArgs(trailingOnly = TRUE)
n <- as.integer(args[1]); iters <- as.integer(args[2]); threads <- as.integer(args[3])
set.seed(42)
X <- matrix(rnorm(n * 30), ncol = 30)
X[1:(n / 2), 1:5] <- X[1:(n / 2), 1:5] + 3
r <- Rtsne(X, num_threads = threads, max_iter = iters, check_duplicates = FALSE)
cat(sprintf("%.6f %.6f\\n", sum(abs(r$Y)), r$itercosts[length(r$itercosts)]))
"""
RTSNE_ARGS = {False: ["4000", "400"], True: ["2000", "250"]}
# RcppML: non-negative matrix factorization of a seeded matrix, half of it zeros; each seed's
# factors summed to 1e-15 (tests/real/RESULTS.md, eighty-ninth session: the same at one and two
# threads, alone and under the shim).
RCPPML_SCRIPT = """suppressMessages(library(RcppML))
args <- commandArgs(trailingOnly = TRUE)
rows <- as.integer(args[1]); cols <- as.integer(args[2]); seeds <- as.integer(args[3])
setRcppMLthreads(as.integer(args[4]))
set.seed(1)
A <- matrix(runif(rows * cols), rows, cols)
A[A < 0.5] <- 0
for (s in 1:seeds) {
  m <- nmf(A, k = 30, tol = 1e-12, maxit = 30, seed = s, verbose = FALSE)
  cat(sprintf("seed %d: w2=%.15g h2=%.15g d=%.15g\\n", s, sum(m$w^2), sum(m$h^2 * seq_along(m$h)), sum(m$d)))
}
"""
RCPPML_ARGS = {False: ["2000", "1500", "2"], True: ["1000", "750", "1"]}

# GROMACS: a 3 nm box of SPC/E water (884 molecules, from gmx's own spc216.gro), energy-minimized
# once by `prepare`, then run for GMX_STEPS steps of 2 fs with PME. Its threads meet several times
# a step, so a co-runner that takes one of its CPUs stalls every step (natively beside gm: 10.1 s
# against 4.9 s alone, 7.3 s with one thread each). `-pin off` in every configuration: by default
# GROMACS pins its threads itself where it uses every CPU of its mask, which the shim respects (it
# then stops confining: tests/real/RESULTS.md), and GROMACS's own guide tells users who share a
# node to turn its pinning off. `-reprod` keeps each thread count's result the same run to run; the
# static split runs it with fewer threads, whose sums differ, and an MD trajectory diverges from
# there, so its checksum is what every thread count shares: the atoms, the steps done, and a
# temperature near the thermostat's 300 K.
GMX_STEPS = {False: 1500, True: 400}
GMX_TOPOLOGY = """#include "oplsaa.ff/forcefield.itp"
#include "oplsaa.ff/spce.itp"
[ system ]
water
[ molecules ]
SOL {waters}
"""
GMX_COMMON_MDP = "cutoff-scheme = Verlet\ncoulombtype = PME\nrcoulomb = 1.0\nrvdw = 1.0\n"
GMX_EM_MDP = "integrator = steep\nnsteps = 500\nemtol = 100\n" + GMX_COMMON_MDP
GMX_MD_MDP = ("integrator = md\nnsteps = 1500\ndt = 0.002\ntcoupl = v-rescale\ntc-grps = System\ntau-t = 0.1\n"
              "ref-t = 300\ngen-vel = yes\ngen-seed = 7\nnstenergy = 100\nnstlog = 500\n" + GMX_COMMON_MDP)


def xtb_checksum(tmp):
    """xtb's results rounded (total energy and free-energy terms to 1e-7 Eh, the gap to 1e-4 eV,
    the optimized coordinates to 1e-3 Angstrom), hashed. Its floating-point sums depend on the
    thread count (one thread against two: the 12th digit of the energy), and the static split runs
    it with fewer threads, so its exact digits cannot be the check; under the shim (the same thread
    count) they come out identical, which tests/real/RESULTS.md records."""
    found = []
    with open(os.path.join(tmp, "out.txt")) as f:
        for line in f:
            m = re.search(r"(TOTAL ENERGY|G\(RRHO\) w/o ZPVE|G\(RRHO\) contrib\.|HOMO-LUMO GAP)\s+(-?\d+\.\d+)", line)
            if m:
                found.append(f"{m.group(1)}={float(m.group(2)):.{4 if 'GAP' in m.group(1) else 7}f}")
    with open(os.path.join(tmp, "xtbopt.xyz")) as f:
        for line in f.read().splitlines()[2:]:
            atom, *xyz = line.split()
            found.append(atom + " ".join(f"{float(v):.3f}" for v in xyz))
    return hashlib.sha256("\n".join(found).encode()).hexdigest()[:16]


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:16]


def prepare_gmx(folder):
    """GROMACS's run input, DIR/gmx/topol.tpr, where gmx is installed and it is not there yet:
    natively, on one thread (a few seconds)."""
    tpr = os.path.join(folder, "gmx", "topol.tpr")
    if not os.path.exists(GMX) or os.path.exists(tpr):
        return
    work = os.path.join(folder, "gmx")
    os.makedirs(work, exist_ok=True)

    def gmx(*args):
        r = subprocess.run([GMX, "-quiet", *args], cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            sys.exit(f"real_job.py: gmx {args[0]} failed while preparing GROMACS's input:\n{r.stderr[-2000:]}")
    gmx("solvate", "-cs", "spc216.gro", "-box", "3", "3", "3", "-o", "water.gro")
    with open(os.path.join(work, "water.gro")) as f:
        waters = sum(1 for line in f if " OW " in line)
    for name, text in (("topol.top", GMX_TOPOLOGY.format(waters=waters)), ("em.mdp", GMX_EM_MDP), ("md.mdp", GMX_MD_MDP)):
        with open(os.path.join(work, name), "w") as f:
            f.write(text)
    gmx("grompp", "-f", "em.mdp", "-c", "water.gro", "-p", "topol.top", "-o", "em.tpr")
    gmx("mdrun", "-s", "em.tpr", "-deffnm", "em", "-nt", "1", "-pin", "off")
    gmx("grompp", "-f", "md.mdp", "-c", "em.gro", "-p", "topol.top", "-o", "topol.tmp.tpr")
    os.rename(os.path.join(work, "topol.tmp.tpr"), tpr)  # complete or absent


def gmx_checksum(tmp):
    """What GROMACS's runs share at any thread count: the atoms, the last step done, and whether
    the run's average temperature is within 30 K of the thermostat's 300 K, hashed (md.log prints
    energies as rows of 15-character columns, names above values)."""
    with open(os.path.join(tmp, "md.gro")) as f:
        atoms = f.read().splitlines()[1].strip()
    with open(os.path.join(tmp, "md.log")) as f:
        log = f.read()
    steps = re.findall(r"^\s+Step\s+Time\s*\n\s+(\d+)\s", log, re.M)
    averages = log.split("<====  A V E R A G E S  ====>")[-1].splitlines()
    near_300 = False
    for names, values in zip(averages, averages[1:]):
        cols = [names[i:i + 15].strip() for i in range(0, len(names), 15)]
        if "Temperature" in cols:
            near_300 = abs(float(values[15 * cols.index("Temperature"):][:15]) - 300.0) < 30.0
            break
    summary = f"atoms={atoms} step={steps[-1] if steps else 'none'} near_300K={near_300}"
    return hashlib.sha256(summary.encode()).hexdigest()[:16]


def prepare(folder, quick):
    """Inputs into folder, skipped when a stamp says they are there with the same sizes."""
    import inputs
    os.makedirs(folder, mode=0o700, exist_ok=True)
    if os.stat(folder).st_uid != os.getuid():
        sys.exit(f"real_job.py: {folder} belongs to another user")
    prepare_gmx(folder)  # whatever the stamp says: gmx may have been installed since
    stamp = os.path.join(folder, "stamp")
    want = f"v3 quick={quick} gm={GM_SIZE[quick]} small={SMALL_SIZE} reads={READS[quick]} numpy={NUMPY_ARGS[quick]} page={PAGE_LINES[quick]}\n"
    try:
        with open(stamp) as f:
            if f.read() == want:
                return
    except OSError:
        pass
    inputs.write_ppm(os.path.join(folder, "in.ppm"), *GM_SIZE[quick])
    inputs.write_ppm(os.path.join(folder, "small.ppm"), *SMALL_SIZE)
    inputs.write_fastq(os.path.join(folder, "reads"), READS[quick])
    inputs.write_page(os.path.join(folder, "page.png"), lines=PAGE_LINES[quick])
    with open(stamp, "w") as f:
        f.write(want)


def run_work(kind, script, args, env):
    """tests/real/<script> ARGS under PYTHON: (its last line less the time, or
    "<kind> checksum=none", the CompletedProcess)."""
    r = subprocess.run([PYTHON, os.path.join(REAL_TESTS, script)] + args, env=env, stdout=subprocess.PIPE,
                       text=True)
    last = (r.stdout.strip().splitlines() or [""])[-1]
    return (last.split(" time_s=")[0] if "checksum=" in last else f"{kind} checksum=none"), r


def run_r_script(tmp, package, debian, script_text, args, env):
    """An R package's work: `script_text` written into tmp and run by Rscript with `args`. Returns
    (the SHA-256 prefix of its stdout, or "none" where it failed; the CompletedProcess)."""
    if not os.path.exists(f"/usr/lib/R/site-library/{package}"):
        sys.exit(f"real_job.py: {package} is not installed (Debian: apt-get install {debian})")
    script = os.path.join(tmp, f"{package}.R")
    with open(script, "w") as f:
        f.write(script_text)
    r = subprocess.run(["/usr/bin/Rscript", script] + args, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, text=True)
    return (hashlib.sha256(r.stdout.encode()).hexdigest()[:16] if r.returncode == 0 else "none"), r


def run_once(kind, folder, quick, threads, env):
    """One run of the program on the prepared inputs: (the line to print, the CompletedProcess)."""
    env = dict(env)  # numpy prepends to LD_LIBRARY_PATH: once per run, not once more per repetition
    with tempfile.TemporaryDirectory(prefix="apshim-real-") as tmp:
        if kind == "gm":
            out = os.path.join(tmp, "out.ppm")
            r = subprocess.run(["/usr/bin/gm", "convert", os.path.join(folder, "in.ppm")] + GM_OPS + [out], env=env)
            line = f"gm blur {GM_SIZE[quick][0]}x{GM_SIZE[quick][1]} checksum={sha(out) if r.returncode == 0 else 'none'}"
        elif kind == "gmloop":
            out = os.path.join(tmp, "out.ppm")
            sums = []
            for _ in range(LOOP_RUNS[quick]):
                r = subprocess.run(["/usr/bin/gm", "convert", os.path.join(folder, "small.ppm"), "-blur", "0x24", out],
                                   env=env)
                if r.returncode != 0:
                    break
                sums.append(sha(out))
            ok = r.returncode == 0
            digest = hashlib.sha256("".join(sums).encode()).hexdigest()[:16] if ok else "none"
            line = f"gmloop runs={LOOP_RUNS[quick]} blur {SMALL_SIZE[0]}x{SMALL_SIZE[1]} checksum={digest}"
        elif kind == "numpy":
            env["LD_LIBRARY_PATH"] = OPENBLAS_OPENMP + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
            line, r = run_work(kind, "numpy_work.py", NUMPY_ARGS[quick], env)
        elif kind == "scipy":
            env["LD_LIBRARY_PATH"] = OPENBLAS_OPENMP + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
            line, r = run_work(kind, "scipy_work.py", SCIPY_ARGS[quick], env)
        elif kind == "sklearn":
            line, r = run_work(kind, "sklearn_work.py", SKLEARN_ARGS[quick], env)
        elif kind == "opencv":
            line, r = run_work(kind, "opencv_work.py", [OPENCV_ROUNDS[quick]] + ([str(threads)] if threads is not None else []),
                               env)
        elif kind == "tesseract":
            if threads is not None:
                env["OMP_THREAD_LIMIT"] = str(threads)
            prefix = os.path.join(tmp, "out")
            r = subprocess.run(["/usr/bin/tesseract", os.path.join(folder, "page.png"), prefix], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            line = f"tesseract lines={PAGE_LINES[quick]} checksum={sha(prefix + '.txt') if r.returncode == 0 else 'none'}"
        elif kind == "flexbar":
            n = threads if threads is not None else len(os.sched_getaffinity(0))
            prefix = os.path.join(tmp, "out")
            r = subprocess.run(["/usr/bin/flexbar", "-r", os.path.join(folder, "reads.fastq"), "-a",
                                os.path.join(folder, "reads.fa"), "-n", str(n), "-t", prefix], env=env,
                               stdout=subprocess.DEVNULL)
            line = f"flexbar reads={READS[quick]} checksum={sha(prefix + '.fastq') if r.returncode == 0 else 'none'}"
        elif kind == "xtb":
            if not os.path.exists("/usr/bin/xtb"):
                sys.exit("real_job.py: xtb is not installed (Debian: apt-get install xtb)")
            with open(os.path.join(tmp, "caffeine.xyz"), "w") as f:
                f.write(CAFFEINE)
            task = "opt" if quick else "ohess"
            with open(os.path.join(tmp, "out.txt"), "w") as out:
                r = subprocess.run(["/usr/bin/xtb", "caffeine.xyz", "--" + task], env=env, cwd=tmp, stdout=out,
                                   stderr=subprocess.DEVNULL)
            line = f"xtb caffeine {task} checksum={xtb_checksum(tmp) if r.returncode == 0 else 'none'}"
        elif kind in ("cp2k", "cp2kmpi"):
            if not os.path.exists("/usr/bin/cp2k.psmp"):
                sys.exit("real_job.py: cp2k is not installed (Debian: apt-get install cp2k)")
            with open(os.path.join(tmp, "h2o.inp"), "w") as f:
                f.write(CP2K_INPUT.format(coords="\n".join("      " + a for a in WATERS)))
            # Open MPI refuses root unless told, looks for networks its ranks here do not need, and
            # without `isolated` wants ssh to start ranks even on this machine.
            env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_btl="self,vader",
                       OMPI_MCA_plm="isolated")
            argv = ["/usr/bin/cp2k.psmp", "-i", "h2o.inp", "-o", "out.txt"]
            if kind == "cp2kmpi":
                # Unbound, as Open MPI leaves ranks past two on one socket, unless the user binds them.
                env.setdefault("OMPI_MCA_hwloc_base_binding_policy", "none")
                if threads is not None:
                    env["OMP_NUM_THREADS"] = str(max(1, threads // MPI_RANKS))
                argv = ["/usr/bin/mpirun", "-np", str(MPI_RANKS)] + argv
            r = subprocess.run(argv, env=env, cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            energy = None
            if r.returncode == 0:
                with open(os.path.join(tmp, "out.txt")) as f:
                    m = re.findall(r"ENERGY\| Total FORCE_EVAL.*?(-?\d+\.\d+)\s*$", f.read(), re.M)
                energy = f"{float(m[-1]):.9f}" if m else None
            line = f"{kind} waters=2 checksum={energy or 'none'}"
        elif kind == "rtsne":
            n = threads if threads is not None else len(os.sched_getaffinity(0))
            digest, r = run_r_script(tmp, "Rtsne", "r-cran-rtsne", RTSNE_SCRIPT, RTSNE_ARGS[quick] + [str(n)], env)
            line = f"rtsne points={RTSNE_ARGS[quick][0]} checksum={digest}"
        elif kind == "rcppml":
            n = threads if threads is not None else 0  # RcppML's own default: every CPU
            digest, r = run_r_script(tmp, "RcppML", "r-cran-rcppml", RCPPML_SCRIPT, RCPPML_ARGS[quick] + [str(n)], env)
            line = f"rcppml rows={RCPPML_ARGS[quick][0]} checksum={digest}"
        elif kind == "gmx":
            tpr = os.path.join(folder, "gmx", "topol.tpr")
            if not os.path.exists(GMX) or not os.path.exists(tpr):
                sys.exit("real_job.py: GROMACS is not installed, or its input not prepared (Debian: apt-get install "
                         "gromacs, then real_job.py prepare DIR)")
            width = ["-ntomp", str(threads)] if threads is not None else []
            r = subprocess.run([GMX, "-quiet", "mdrun", "-s", tpr, "-deffnm", "md", "-ntmpi", "1", *width, "-pin", "off",
                                "-nb", "cpu", "-reprod", "-nsteps", str(GMX_STEPS[quick])], env=env, cwd=tmp,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            digest = gmx_checksum(tmp) if r.returncode == 0 else "none"
            line = f"gmx waters steps={GMX_STEPS[quick]} checksum={digest}"
        else:
            sys.exit(f"real_job.py: unknown program {kind!r}\n{__doc__}")
    return line, r


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    kind, folder, rest = argv[0], argv[1], argv[2:]
    if kind == "prepare":
        prepare(folder, "--quick" in rest)
        return 0
    threads = WIDTH
    if len(rest) >= 2 and rest[-2] == "--threads":
        threads, rest = int(rest[-1]), rest[:-2]
    with open(os.path.join(folder, "stamp")) as f:
        quick = "quick=True" in f.read()
    env = dict(os.environ)
    if threads is not None and kind in ("gm", "gmloop", "numpy", "scipy", "sklearn", "xtb", "cp2k"):
        env["OMP_NUM_THREADS"] = str(threads)
    start = time.monotonic()
    with OutsideHog() if HOG else contextlib.nullcontext():
        for _ in range(REPEAT):
            line, r = run_once(kind, folder, quick, threads, env)
            if r.returncode != 0:
                break
    print(f"{line} time_s={time.monotonic() - start:.3f}", flush=True)
    if r.returncode != 0:
        why = f"killed by signal {-r.returncode}" if r.returncode < 0 else f"exit status {r.returncode}"
        print(f"real_job.py: {kind} {why}", file=sys.stderr, flush=True)
    return r.returncode if r.returncode >= 0 else 128 - r.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
