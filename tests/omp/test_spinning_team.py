"""A library whose threads meet in spin-waits without a yield (BLIS: bli_thrcomm_barrier_atomic; Eigen's
parallel products), and a `parallel sections` region whose sections do (velvet's producer and
consumer), are not confined below their teams while they run (adapters/omp/whole_team.hpp:
spins_at_meetings, sections_may_meet): confined to fewer CPUs than threads, each meeting waits for
a kernel time slice (Debian's BLIS under NumPy at allotment 1 took 4x its one-thread time so,
thirty-seventh session; velvet's velveth 7x, forty-fifth; R's RcppML, Eigen's, 1.45x, eighty-ninth).
omp_spinning_team calls a stand-in for BLIS (blis_standin.c, a file named as BLIS's), one for
Eigen's product (eigen_standin.c, a function named as an instantiation of Eigen's
parallelize_gemm), regions of its own of the same shape and sections regions of two sections that
meet so (in gcc's three entry points in turn: GOMP_parallel_sections, GOMP_sections_start,
GOMP_sections2_start), in turn, with the team OpenMP promises (dynamic adjustment off, the
default), and says how many CPUs each team's threads could run on at their last meeting, read with
the raw system call. Throttled (a stand-in co-runner holds the rest of a P = 2 table: allotment 1),
every library call and sections region after the first two must have run on every CPU and at
least one of the program's own regions on one (the rule is the libraries' and the sections', not
every team's), and the trace's confine_check column must read `spinning` and `confined`; with the
library before, every call ran on one CPU after the start (the sections too, before the forty-sixth
session; Eigen's, before the ninetieth). The native answer alone, throttled and at APSHIM_P=8.
Where the program allows dynamic adjustment, Eigen's teams, which it splits its work over, are
the shim's to size: throttled, one thread each."""
import subprocess
import sys

from apshim_test import Check, CoRunner, Shim, phases_in_order, require_two_cpus, stdout_words

require_two_cpus("a team of two on one CPU is what the library's rule is about")
build, prog = sys.argv[1], sys.argv[2]
shim = Shim(build)
check = Check("omp.spinning_team")
# 8 calls of 30 meetings with 1.5 M steps of work between them (a few ms): natively about 1 s (each
# call a BLIS call, a region of its own and a sections region).
args = [prog, "8", "30", "1500000"]


def words(r):
    return stdout_words(r.stdout) if r.returncode == 0 and r.stdout.startswith("omp_spinning_team") else {}


def widths(w, key):
    return [int(x) for x in w.get(key, "").split(",") if x]


native = shim.native(args, timeout=60)
n = words(native)
cpus = int(n.get("max_threads", 0))
check.expect(bool(n) and cpus >= 2 and set(widths(n, "blis_widest")) == {cpus},
             f"natively every team runs on all {cpus} CPUs ({native.returncode}: {native.stdout.strip()})")


def run(tag, env):
    r = shim.run(args, env, timeout=60)
    w = words(r)
    check.expect(bool(w) and w["checksum"] == n.get("checksum"),
                 f"{tag}: the native answer ({r.stdout.strip() or r.stderr.strip()[-300:]})")
    return w


run("alone", shim.env(P=2, gat=shim.path("gat-alone")))
env = shim.env(P=2, gat=shim.path("gat-throttled"), trace=shim.path("trace-throttled-%p.csv"))
with CoRunner(shim, env, 2):
    w = run("throttled", env)
phases = phases_in_order(shim.trace_rows("trace-throttled-"))
check.expect("spinning" in phases and "confined" in phases,
             f"throttled: the trace says so, confined in between (confine_check in order {phases[:12]})")
if w:
    blis, own = widths(w, "blis_widest"), widths(w, "own_widest")
    check.expect(len(blis) == 8 and all(x == cpus for x in blis[2:]),
                 f"throttled: every library call after the first two ran on all {cpus} CPUs (widths {blis})")
    eigen = widths(w, "eigen_widest")
    check.expect(len(eigen) == 8 and all(x == cpus for x in eigen[2:]),
                 f"throttled: every Eigen product after the first two ran on all {cpus} CPUs (widths {eigen})")
    check.expect(1 in own, f"throttled: the program's own regions of that shape were confined to one CPU (widths {own})")
    sections = widths(w, "sections_widest")
    check.expect(len(sections) == 8 and all(x == cpus for x in sections[2:]),
                 f"throttled: every parallel sections region after the first two ran on all {cpus} CPUs (widths {sections})")
run("P=8", shim.env(P=8, gat=shim.path("gat-p8")))

# Eigen splits its product over the team it gets, so where the program allows dynamic adjustment
# the shim sizes that team to the allotment like any other (TeamNeed::any_spinning): a team of one
# never waits for a teammate. Both runtimes size it at the fork.
eigen_args = [prog, "4", "30", "1500000", "eigen"]
expected = stdout_words(shim.native(eigen_args, timeout=60).stdout).get("checksum")
env = shim.env(P=2, gat=shim.path("gat-eigen-dynamic"), OMP_DYNAMIC="true")
with CoRunner(shim, env, 2):
    r = shim.run(eigen_args, env, timeout=60)
w = words(r)
teams = widths(w, "eigen_teams")
check.expect(expected is not None and w.get("checksum") == expected and len(teams) == 4 and
             all(x == 1 for x in teams[2:]),
             f"OMP_DYNAMIC=true, throttled: every Eigen product after the first two had a team of one, the native "
             f"answer ({r.stdout.strip() or r.stderr.strip()[-300:]})")

# Where the program allows dynamic adjustment, the shim sizes teams to the allotment, and a team of
# one runs both sections, the first waiting for ever for the second (natively too, where libgomp's
# load-average rule gives one thread). libgomp's `parallel sections`, sized at its fork
# (GOMP_parallel_sections), keeps its whole team (whole_team.hpp: fork_team_need): velvet hung so
# with the library before. libomp's fork cannot tell a sections region: not checked for clang.
if "gcc" in prog.rsplit("/", 1)[-1]:
    sections_args = [prog, "4", "30", "1500000", "sections"]
    expected = stdout_words(shim.native(sections_args, timeout=60).stdout).get("checksum")
    env = shim.env(P=2, gat=shim.path("gat-dynamic"), OMP_DYNAMIC="true")
    with CoRunner(shim, env, 2):
        try:
            r = shim.run(sections_args, env, timeout=30)
            out = r.stdout.strip() or r.stderr.strip()[-300:]
            got = stdout_words(r.stdout).get("checksum") if r.returncode == 0 else None
        except subprocess.TimeoutExpired:
            out, got = "killed after 30 s: its sections waited for each other in a smaller team", None
    check.expect(expected is not None and got == expected,
                 f"OMP_DYNAMIC=true, throttled: parallel sections keep their team of two, the native answer ({out})")
else:
    print("not checked for libomp: OMP_DYNAMIC=true with sections that meet (its fork cannot tell a sections region)",
          flush=True)
check.done()
