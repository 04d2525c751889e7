"""OpenMP's promises hold under the shim, alone, throttled and with APSHIM_P above the cores
(omp_contract: NPB IS's per-thread data sized by omp_get_max_threads(), OpenBLAS's pieces that
wait for each other, NPB EP's one long region of static loops):
  - every team has exactly omp_get_max_threads() threads while dynamic adjustment is off (the
    default): never more (NPB IS crashed at APSHIM_P=8), never fewer (NumPy/OpenBLAS hung);
  - the program sees its original CPU mask, and so does a child process it starts, although
    the shim confines its threads;
  - with OMP_DYNAMIC=true (the program allows smaller teams) teams may shrink to the allotment,
    never above omp_get_max_threads(), with the same answer;
  - gcc's regions with a task reduction (GOMP_parallel_reductions) keep the same promises alone
    and above the cores.
Usage: test_contract.py BUILD OMP_CONTRACT"""
import re
import sys

from apshim_test import Check, CoRunner, Shim, usable_cpus

build, prog = sys.argv[1], sys.argv[2]
shim = Shim(build)
check = Check("omp.contract")
args = [prog, "5", "20000000"]
compiler = "clang" if prog.endswith("_clang") else "gcc"


def facts(stderr):
    m = re.search(r"max_threads (\d+) team (\d+) mask (\d+) child_mask (-?\d+)", stderr)
    return tuple(int(x) for x in m.groups()) if m else None


native = shim.native(args, timeout=120)
check.expect(native.returncode == 0, f"native: exit 0 ({native.stderr.strip()[:200]})")
nmax, nteam, nmask, nchild = facts(native.stderr)


def same_promises(name, r, allow_smaller=False):
    check.expect(r.returncode == 0, f"{name}: exit 0, no broken promise, no stall ({r.stderr.strip()[:300]})")
    check.expect(r.stdout == native.stdout, f"{name}: same checksum as without the shim")
    f = facts(r.stderr)
    if not check.expect(f is not None, f"{name}: reported its facts"):
        return
    mx, team, mask, child = f
    check.expect(mx == nmax, f"{name}: omp_get_max_threads() {mx} as natively ({nmax})")
    if allow_smaller:
        check.expect(1 <= team <= mx, f"{name}: team {team} within [1, omp_get_max_threads() = {mx}]")
    else:
        check.expect(team == mx, f"{name}: team {team} == omp_get_max_threads() {mx}")
    check.expect(mask == nmask, f"{name}: the program sees its original CPU mask ({mask} CPUs, natively {nmask})")
    check.expect(child == nchild, f"{name}: a child process starts on the original mask ({child} CPUs, natively {nchild})")


same_promises("alone", shim.run(args, shim.env(gat=shim.path("alone")), timeout=120))
same_promises("APSHIM_P=8", shim.run(args, shim.env(P=8, gat=shim.path("p8")), timeout=120))
# gcc forks a region with a task reduction through its own entry point (GOMP_parallel_reductions),
# whose data block the shim hands over with the reductions in its first word: the same promises
# and answer alone and above the cores (throttled: omp.gcc.enforce_taskred).
if compiler == "gcc":
    same_promises("alone, a task reduction", shim.run(args + ["taskred"], shim.env(gat=shim.path("alone-taskred")), timeout=120))
    same_promises("APSHIM_P=8, a task reduction",
                  shim.run(args + ["taskred"], shim.env(P=8, gat=shim.path("p8-taskred")), timeout=120))
# Throttled: allotment 1 of a table of the real CPUs (2 on CI), so confinement is in force.
P = max(2, min(usable_cpus(), 8))
env = shim.env(P=P, gat=shim.path("throttled"))
with CoRunner(shim, env, P=P):
    same_promises("throttled", shim.run(args, env, timeout=120))
env = shim.env(P=P, gat=shim.path("dynamic"), OMP_DYNAMIC="true")
with CoRunner(shim, env, P=P):
    same_promises("throttled, OMP_DYNAMIC=true", shim.run(args, env, timeout=120), allow_smaller=True)
check.done()
