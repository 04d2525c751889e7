"""A binding the user chose is respected (OMP_PROC_BIND=close): the shim does not confine the
program's threads (it says so at APSHIM_LOG=info), every thread keeps the CPU the runtime bound it
to, and the controller thread, although the bound master thread started it, runs on the whole
process mask (it once inherited the master's single CPU). Throttled: a stand-in co-runner holds
the rest of the table. Parking, then the only hold, cannot stop the program's long region of static
loops: the shim says once that the job is not held to its allotment (shim/hold_check.hpp; NPB EP.W
with OMP_PROC_BIND=true used 1.93 CPUs at allotment 1, and nothing said so at the default log
level). Alone, with no APSHIM_P, the table it makes has P = the process's CPUs: libgomp binds the
initial thread to its first place in its own constructor, before the shim's, and until the
eightieth session the shim took that one CPU for the process's mask (P = 1: every job of the
table then held to one processor, and the controller kept to that CPU).
The runtimes read the binding variables differently, and each program is judged by its own
runtime's reading: KMP_AFFINITY is LLVM's and Intel's variable, which libgomp ignores (until the
eighty-first session the shim took it for a binding in every process); OMP_PROC_BIND=false turns
libgomp's OMP_PLACES off, not libomp's; a KMP_AFFINITY without a binding type turns libomp's
OMP_PROC_BIND off, not libgomp's (until the eighty-second session the shim took both for bindings
in either runtime). Where the program's runtime binds, its threads are left where it bound them and
the shim says why; where it does not, the program is confined as any other.
Usage: test_bind.py BUILD OMP_CONTRACT"""
import os
import subprocess
import sys

from apshim_test import (Check, CoRunner, Shim, job_of, mask_looks, masks_until_exit, one_cpu, require_two_cpus,
                         wait_for)

build, prog = sys.argv[1], sys.argv[2]
shim = Shim(build)
check = Check("omp.bind")
require_two_cpus("binding and confinement look the same on one")


args = [prog, "3", "80000000"]  # about 3 s natively: the hold is measured over a second
short = [prog, "2", "30000000"]  # about 1 s: where only the answer and the table are read
native = shim.native(args, timeout=120, OMP_PROC_BIND="close")
check.expect(native.returncode == 0, "runs natively with OMP_PROC_BIND=close")
everything = open("/proc/self/status").read().split("Cpus_allowed_list:")[1].split()[0]
cpus = len(os.sched_getaffinity(0))
alone_env = shim.env(gat=shim.path("gat-alone"), OMP_PROC_BIND="close")  # no APSHIM_P: the table's P is the default
native_short = shim.native(short, timeout=120, OMP_PROC_BIND="close")
p = shim.spawn(short, alone_env)
joined = wait_for(lambda: job_of(shim.status(alone_env), p.pid) is not None, 20)
out, err = p.communicate(timeout=120)
status = shim.status(alone_env)  # the table outlives its jobs
table_P = status["P"] if joined and status else None
check.expect(p.returncode == 0 and out == native_short.stdout,
             f"alone: same answer under the shim ({err.strip()[:200]})")
check.expect(table_P == cpus, f"alone: the table it made has P = the process's {cpus} CPUs ({table_P})")
env = shim.env(P=2, APSHIM_LOG="info", OMP_PROC_BIND="close")
with CoRunner(shim, env, P=2):
    p = shim.spawn(args, env)
    team, controller = masks_until_exit(p)  # the last look that saw the team
    out, err = p.communicate(timeout=120)
check.expect(p.returncode == 0 and out == native.stdout, f"same answer under the shim ({err.strip()[:200]})")
check.expect("not confining" in err and "OMP_PROC_BIND" in err, "the shim says it does not confine, and why")
unheld = [line for line in err.splitlines() if "not held to them" in line]
check.expect(len(unheld) == 1 and "OMP_PROC_BIND" in unheld[0],
             f"the shim says once that parking does not hold the job, and why ({unheld})")
ctl = list(controller.values())
workers = list(team.values())
check.expect(ctl == [everything], f"the controller runs on the whole mask {everything} ({ctl})")
check.expect(len(workers) >= 2 and all("," not in a and "-" not in a for a in workers),
             f"each OpenMP thread keeps the single CPU the runtime bound it to ({workers})")
libomp = "libomp" in subprocess.run(["ldd", prog], stdout=subprocess.PIPE, text=True).stdout
runtime = "libomp" if libomp else "libgomp"
# (environment, what libomp binds for, what libgomp binds for): read from each runtime's threads
# without the shim (libgomp 12, libomp 14).
cases = [({"KMP_AFFINITY": "compact"}, "KMP_AFFINITY", None),
         ({"OMP_PROC_BIND": "false", "OMP_PLACES": "cores"}, "OMP_PLACES", None),
         ({"KMP_AFFINITY": "none", "OMP_PROC_BIND": "true"}, None, "OMP_PROC_BIND")]
for i, (variables, libomp_binds, libgomp_binds) in enumerate(cases):
    binds = libomp_binds if libomp else libgomp_binds
    what = " ".join(f"{k}={v}" for k, v in variables.items()) + f", {runtime}"
    native = shim.native(short, timeout=120, **variables)
    env = shim.env(P=2, gat=shim.path(f"gat-case{i}"), APSHIM_LOG="info", **variables)
    with CoRunner(shim, env, P=2):
        p = shim.spawn(short, env)
        teams = mask_looks(p)
        out, err = p.communicate(timeout=120)
    check.expect(native.returncode == 0 and p.returncode == 0 and out == native.stdout,
                 f"{what}: same answer under the shim ({err.strip()[:200]})")
    if binds:
        check.expect(f"{binds} is set" in err,
                     f"{what}: the shim says it does not confine, and why ({err.strip()[:200]})")
        spread = [look for look in teams if len({m for m in look.values() if one_cpu(m)}) >= 2]
        check.expect(len(spread) >= len(teams) // 2 > 0,
                     f"{what}: the threads on the CPUs the runtime bound them to in most looks "
                     f"({len(spread)} of {len(teams)})")
    else:
        check.expect("confining" not in err, f"{what}: no word of not confining ({err.strip()[:200]})")
        confined = [look for look in teams if len(set(look.values())) == 1 and one_cpu(next(iter(look.values())))]
        check.expect(len(confined) >= len(teams) // 2 > 0,
                     f"{what}: its threads confined to one CPU in most looks ({len(confined)} of {len(teams)})")
check.done()
