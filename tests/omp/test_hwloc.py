"""hwloc's topology discovery is no binding; a binding the program keeps is respected.

Throttled (a stand-in co-runner holds the rest of a table of P = 2, so the job has allotment 1):
- `probe`: the program loads hwloc's topology, which binds its main thread to each CPU in turn and
  restores its mask (GROMACS, Open MPI and other hwloc users do this at their start). The shim
  must not take that for the program binding its threads: it says nothing about it, and the
  job keeps at most about one processor busy, from /proc (GROMACS kept 1.95 of 2 at allotment 1
  before the shim told the two apart).
  Then, after the first region, a probe as libomp's at its first region (libc's syscall, each
  CPU in turn, then the mask it read) with 0.25 s on each CPU, as long as a probing thread niced
  below a process on that CPU can wait there: no binding either. The shim once took the calls'
  pause for a binding kept (1 run in 20 of omp.clang.outside_load's niced job beside a hog on one
  CPU; docs/enforcement.md, seventieth session).
- `pin`: then every OpenMP thread binds itself to a CPU of its own (GROMACS's `mdrun -pin on`):
  the shim says it stops confining, at its default log level (a warning: the user may not know
  that the program pins, and the program is no longer held to its allotment), and the threads
  keep the CPUs they chose.
- `rawpin`: the same halfway through the run, while confined, with the raw system call, which no
  interposer sees (hwloc in oneTBB's tbbbind, loaded RTLD_DEEPBIND): the shim finds it in the
  threads' masks, says it stops, and leaves them there. The one thread pinned to the job's own CPU
  cannot be told from a thread the shim confined (no call was seen): it goes back to the whole
  mask, so one pin may be lost there, never more.
- `syscallpin`: the same through libc's syscall(SYS_sched_setaffinity), libomp's affinity code's
  route, which the shim interposes: no pin lost (one was in 4 runs of 4 before the fifty-first
  session: the call went through unrecorded, found as rawpin's are).
All print what they print without the shim; at the end each pinned thread reads its mask with the
raw system call ("pins lost L of N" on stderr; natively 0). Usage: test_hwloc.py BUILD OMP_HWLOC"""
import re
import sys

from apshim_test import Check, CoRunner, Shim, cpus_used, masks_until_exit, require_two_cpus

build, prog = sys.argv[1], sys.argv[2]
shim = Shim(build)
check = Check("omp.hwloc")
require_two_cpus("confinement to 1 of them is what it checks")
stopped = "the program sets CPU affinity itself"

for mode in ("probe", "pin", "rawpin", "syscallpin"):
    args = [prog, mode, "12", "100000000"]
    native = shim.native(args, timeout=120)
    check.expect(native.returncode == 0, f"{mode}: runs natively ({native.stderr.strip()[:200]})")
    env = shim.env(P=2, gat=shim.path(f"gat-{mode}"))  # the default log level: what a user sees
    with CoRunner(shim, env, P=2):
        p = shim.spawn(args, env)
        masks = masks_until_exit(p)[0] if mode == "pin" else {}
        used = cpus_used(p, skip_s=1.0) if mode == "probe" else None
        out, err = p.communicate(timeout=120)
    check.expect(p.returncode == 0 and out == native.stdout,
                 f"{mode}, throttled: the same output ({out.strip()!r}, natively {native.stdout.strip()!r}) {err.strip()[:200]}")
    if mode == "probe":
        check.expect(stopped not in err, f"probe: the shim goes on confining ({err.strip()[:300]})")
        check.expect(used is not None and used <= 1.15, f"probe: at most about one processor busy ({used and round(used, 2)})")
    else:
        check.expect(stopped in err, f"{mode}: the shim says it stops confining ({err.strip()[:300]})")
        lost = [tuple(map(int, m.groups())) for m in re.finditer(r"pins lost (\d+) of (\d+)", native.stderr + "\n" + err)]
        allowed = 1 if mode == "rawpin" else 0
        check.expect(len(lost) == 2 and lost[0][0] == 0 and lost[1][0] <= allowed and lost[1][1] >= 2,
                     f"{mode}: pins lost natively and throttled {lost} (at most {allowed} throttled)")
    if mode == "pin":
        singles = sorted(m for m in masks.values() if m.isdigit())
        check.expect(len(singles) >= 2 and len(set(singles)) == len(singles),
                     f"pin: each OpenMP thread keeps the CPU it chose, none shares one ({masks})")
check.done()
