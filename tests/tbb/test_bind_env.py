"""OpenMP's binding variables (OMP_PROC_BIND, OMP_PLACES, GOMP_CPU_AFFINITY, KMP_AFFINITY) bind
nothing in a program that links no OpenMP runtime, and confinement holds it as any other: HPC
module files set OMP_PROC_BIND for every job, and until the eighty-first session a oneTBB program
run under one was held by parking only ("not confining threads to the allotment's CPUs:
OMP_PROC_BIND is set"). Throttled (a stand-in co-runner holds the rest of a table of P = 2), with
OMP_PROC_BIND=true: the same output as natively, no such line, and its threads confined to one
CPU. (A program that links an OpenMP runtime keeps it off: omp.*.bind; one that a Python module
loads later binds its threads then, and confinement stops: shim/confine.hpp, binding_asked.)
Usage: test_bind_env.py BUILD TBB_FIB"""
import sys

from apshim_test import Check, CoRunner, Shim, mask_looks, one_cpu, require_two_cpus

require_two_cpus("confinement to 1 of them is what it checks")
build, prog = sys.argv[1], sys.argv[2]
shim = Shim(build)
check = Check("tbb.bind_env")
args = [prog, "40", "14", "6"]  # about 2 s at allotment 1: the masks are read every 50 ms
native = shim.native(args, timeout=120)
check.expect(native.returncode == 0, f"runs natively ({native.stderr.strip()[:200]})")
env = shim.env(P=2, APSHIM_LOG="info", OMP_PROC_BIND="true")
with CoRunner(shim, env, P=2):
    p = shim.spawn(args, env)
    looks = mask_looks(p)
    out, err = p.communicate(timeout=120)
check.expect(p.returncode == 0 and out == native.stdout, f"same answer under the shim ({err.strip()[:200]})")
check.expect("confining" not in err, f"no word of not confining ({err.strip()[:300]})")
confined = [look for look in looks if len(set(look.values())) == 1 and one_cpu(next(iter(look.values())))]
check.expect(len(confined) >= len(looks) // 2 > 0,
             f"its threads confined to one CPU in most looks ({len(confined)} of {len(looks)}; the last: {looks[-1:]})")
check.done()
