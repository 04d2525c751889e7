"""A library that needs whole teams keeps them where the program allows smaller ones
(adapters/omp/whole_team.hpp). omp_whole_team (OMP_DYNAMIC=true, or APSHIM_SHRINK_TEAMS=1) calls a
stand-in for OpenBLAS's OpenMP build (openblas_standin.c: omp_get_max_threads() pieces that wait
for each other; in a smaller team a wait gives up after 2 s) and one for BLIS's (blis_standin.c: a
whole team or one, or BLIS aborts) in turn with regions of its own.
Debian's NumPy, SciPy and Octave on OpenMP OpenBLAS hung so under the shim with OMP_DYNAMIC=true at
allotment 1, and natively with libgomp once the load average reached a CPU (docs/enforcement.md,
thirty-sixth session). Checked, alone, throttled (allotment 1) and throttled with
APSHIM_SHRINK_TEAMS=1: every OpenBLAS stand-in call completed in a team of omp_get_max_threads(),
every BLIS stand-in call ran in a whole team or one, the program's dyn-var read as it set it after
each, and, throttled, the program's own last team had shrunk to the allotment (its permission
outlived the library's calls). Also alone with OMP_NUM_THREADS=4 on 2 CPUs, where the shim would
give a default team 2 of its 4 threads: NumPy on Debian's BLIS died of SIGABRT so (thirty-seventh
session)."""
import sys

from apshim_test import Check, CoRunner, Shim, stdout_words

build, prog = sys.argv[1], sys.argv[2]
shim = Shim(build)
check = Check("omp.whole_team")
args = [prog, "1.2"]  # 1.2 s of calls and regions: hundreds of each; throttled, the allotment is 1 from the first cycles


def words(r):
    w = stdout_words(r.stdout) if r.returncode == 0 and r.stdout.startswith("omp_whole_team") else {}
    return {k: int(v) for k, v in w.items()}


native = shim.native(args, timeout=60, OMP_DYNAMIC="false")
n = words(native)
check.expect(n.get("incomplete") == 0, f"natively, dynamic adjustment off: every call completes ({native.stdout.strip()})")
max_threads = n.get("max_threads", 0)


def run(name, env, shrunk, threads=None):
    r = shim.run(args, env, timeout=60)
    w = words(r)
    what = r.stdout.strip() or r.stderr.strip()[:300]
    if not check.expect(bool(w), f"{name}: exit 0 ({what})"):
        return
    whole = threads or max_threads
    check.expect(w["incomplete"] == 0 and w["lib_team_min"] == whole,
                 f"{name}: every OpenBLAS stand-in call completed in a team of {whole} ({what})")
    check.expect(w["blis_bad"] == 0, f"{name}: every BLIS stand-in call in a whole team or one")
    check.expect(w["dynamic_changed"] == 0, f"{name}: the program's dyn-var as it set it after every call")
    if shrunk:
        check.expect(w["own_team_last"] == 1, f"{name}: the program's own last team shrank to the allotment, 1")


run("alone, OMP_DYNAMIC=true", shim.env(P=2, gat=shim.path("alone"), OMP_DYNAMIC="true"), shrunk=False)
run("alone, OMP_DYNAMIC=true, 4 threads asked", shim.env(P=2, gat=shim.path("alone4"), OMP_DYNAMIC="true",
                                                        OMP_NUM_THREADS=4), shrunk=False, threads=4)
for name, tag, kw in (("throttled, OMP_DYNAMIC=true", "dyn", {"OMP_DYNAMIC": "true"}),
                      ("throttled, APSHIM_SHRINK_TEAMS=1", "opt", {"APSHIM_SHRINK_TEAMS": 1})):
    env = shim.env(P=2, gat=shim.path(tag), **kw)
    with CoRunner(shim, env, P=2):
        run(name, env, shrunk=True)
check.done()
