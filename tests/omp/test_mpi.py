"""MPI + OpenMP (tests/omp/omp_mpi.c under Open MPI's mpirun, two ranks): every rank is a process
and so a job of its own in the table, the shim preloaded into mpirun reaching them through the
environment it hands its ranks. Started with `--bind-to none` (what a user gets past two ranks on
one socket, or asks for), each rank's OpenMP team is one thread per CPU of the machine, and the
ranks' teams oversubscribe it: natively libgomp's threads spin at each region's end while the other
rank's threads hold the CPUs, and MPI's polls spin on top (2.4 s and 4.3 CPU-seconds here, against
0.5 s and 0.4 CPU-seconds with one thread per rank). Under the shim each rank gets allotment 1 and
a CPU of its own, and keeps the team OpenMP promised it (dyn-var off).

Checked: the native answer in every mode (alone, throttled by a stand-in co-runner, APSHIM_P=8,
and with Open MPI's default binding); alone, both ranks in the table (a trace each) held to one
CPU each for most of their cycles, with their promised teams of two, and the whole run's CPU time
(mpirun's children, the ranks included) within twice the one-thread-per-rank run's plus 0.5 s
(natively 4.3 CPU-seconds: this fails without the shim in the ranks); with Open MPI's binding of
each rank to a core (its default for two ranks), each rank's threads stay on its own core, as
natively."""
import os
import resource
import shutil
import sys

from apshim_test import Check, CoRunner, Shim, require_two_cpus, stdout_words

require_two_cpus("two ranks, each on a CPU of its own")
build, prog = sys.argv[1], sys.argv[2]
MPIRUN = shutil.which("mpirun")
if not MPIRUN:
    print("SKIP: no mpirun (Debian: apt-get install openmpi-bin)")
    sys.exit(77)
shim = Shim(build)
check = Check("omp.mpi")
ROUNDS, N = "400", "100000"
# mpirun refuses to run as root without these; with them it runs as for any user. `isolated`:
# ranks on this machine only, started without ssh (Open MPI's default launcher, rsh, refuses to
# start where no ssh or rsh is installed, as on a fresh Debian 12 with install-deps' packages).
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "OMPI_MCA_plm": "isolated"}


def mpirun(*options):
    return [MPIRUN, "-np", "2", *options, prog, ROUNDS, N]


def parse(out):
    """(checksum or None, {rank: {"team", "max_threads", "cpus"}}) from the ranks' lines."""
    total, ranks = None, {}
    for line in out.splitlines():
        if not line.startswith("omp_mpi "):
            continue
        words = stdout_words(line)
        if "checksum" in words:
            total = words["checksum"]
        elif "rank" in words:
            ranks[int(words["rank"])] = {"team": int(words["team"]), "max_threads": int(words["max_threads"]),
                                         "cpus": int(words["cpus"], 16)}
    return total, ranks


def run(tag, argv, env):
    """(checksum, ranks, CPU seconds of mpirun and every process it waited for) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = shim.run(argv, dict(env, **MPI_ENV), timeout=90)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    total, ranks = parse(r.stdout)
    check.expect(r.returncode == 0 and total is not None and sorted(ranks) == [0, 1],
                 f"{tag}: both ranks ran to the end ({r.returncode}: {r.stdout.strip()} {r.stderr.strip()[-300:]})")
    return total, ranks, cpu


# One thread per rank, natively: the answer, and the CPU time the work needs.
native, _, one_thread_cpu = run("natively, one thread per rank", mpirun("--bind-to", "none"),
                                shim.env(preload=False, OMP_NUM_THREADS=1))
check.expect(native is not None, f"natively: an answer ({native})")

env = shim.env(P=2, gat=shim.path("gat-alone"), trace=shim.path("trace-alone-%p.csv"))
total, ranks, cpu = run("alone, --bind-to none", mpirun("--bind-to", "none"), env)
check.expect(total == native, f"alone: the native answer ({total} vs {native})")
check.expect(all(r["team"] == 2 and r["max_threads"] == 2 for r in ranks.values()),
             f"alone: each rank's teams of two, as OpenMP promised it ({ranks})")
check.expect(cpu <= 2 * one_thread_cpu + 0.5,
             f"alone: {cpu:.2f} CPU-seconds in all, within twice one thread per rank's ({one_thread_cpu:.2f}) plus 0.5")
traces = sorted(n for n in os.listdir(shim.tmp) if n.startswith("trace-alone-"))
check.expect(len(traces) == 2, f"alone: both ranks joined the table, a trace each ({traces})")
for name in traces:
    rows = shim.trace_rows(name)
    held = sum(1 for r in rows if r["allotment"] == 1 and r["cpus"] == 1)
    check.expect(rows and held >= len(rows) // 2,
                 f"alone, {name}: allotment 1 and one CPU in most cycles ({held} of {len(rows)})")

env = shim.env(P=2, gat=shim.path("gat-throttled"))
with CoRunner(shim, env, 2):
    total, _, _ = run("throttled", mpirun("--bind-to", "none"), env)
check.expect(total == native, f"throttled: the native answer ({total} vs {native})")

total, _, _ = run("APSHIM_P=8", mpirun("--bind-to", "none"), shim.env(P=8, gat=shim.path("gat-p8")))
check.expect(total == native, f"APSHIM_P=8: the native answer ({total} vs {native})")

# Open MPI's own binding (two ranks: each bound to a core): one thread per rank, on its core.
bound_native, bound_ranks_native, _ = run("natively, Open MPI's binding", mpirun(), shim.env(preload=False))
total, ranks, _ = run("Open MPI's binding", mpirun(), shim.env(P=2, gat=shim.path("gat-bound")))
check.expect(total == native and bound_native == native, f"Open MPI's binding: the native answer ({total}, {bound_native})")
check.expect(all(r["team"] == n["team"] and r["max_threads"] == n["max_threads"]
                 for r, n in zip(ranks.values(), bound_ranks_native.values())),
             f"Open MPI's binding: each rank's team as natively ({ranks} vs {bound_ranks_native})")
masks = [ranks[k]["cpus"] for k in sorted(ranks)]
check.expect(len(masks) == 2 and all(bin(m).count("1") == 1 for m in masks) and masks[0] != masks[1],
             f"Open MPI's binding: each rank's threads on its own core, as bound ({[hex(m) for m in masks]})")
check.done()
