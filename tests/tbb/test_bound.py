"""APSHIM_P above the cores shows oneTBB that many CPUs, unless the program bound itself: then its
own mask is the truth (oneTBB's test_hw_concurrency binds to half the CPUs and requires
max_concurrency() to say so; it failed at APSHIM_P=8 with 8 == 1). The program itself always sees
the mask it has, also when it binds while the shim confines it (throttled, 'late': the mask it
set, not the original one the shim shows to programs that did not bind)."""
import os
import sys

from apshim_test import Check, CoRunner, Shim, any_sanitizer_preloaded, require_two_cpus

require_two_cpus("confinement to 1 of them is what its late-binding case checks")
build, prog = sys.argv[1], sys.argv[2]
shim = Shim(build)
check = Check("tbb.bound")
cpus = len(os.sched_getaffinity(0))
for mode in ("bind", "free"):
    native = shim.native([prog, mode], timeout=30)
    check.expect(native.returncode == 0, f"{mode}: runs natively ({native.stdout.strip()} {native.stderr.strip()[:200]})")
    for P in (2, 8):
        r = shim.run([prog, mode], shim.env(P=P, gat=shim.path(f"gat-{mode}-{P}")), timeout=30)
        if mode == "bind" or P <= cpus:
            want = native.stdout
        elif any_sanitizer_preloaded():
            continue  # the sanitizer's sched_getaffinity interceptor answers libtbb before the shim can
        else:  # TBB is shown P CPUs; the program's own question is answered truthfully
            want = f"tbb {P} mask {cpus}\n"
        check.expect(r.returncode == 0 and r.stdout == want,
                     f"{mode} at APSHIM_P={P}: {r.stdout.strip()!r} (want {want.strip()!r}) {r.stderr.strip()[:200]}")
native = shim.native([prog, "late"], timeout=30)
check.expect(native.returncode == 0 and native.stdout.endswith("mask 1\n"), f"late: natively {native.stdout.strip()!r}")
env = shim.env(P=2, gat=shim.path("gat-late"))
with CoRunner(shim, env, 2):
    r = shim.run([prog, "late"], env, timeout=30)
check.expect(r.returncode == 0 and r.stdout == native.stdout,
             f"late, throttled (confined when it binds): {r.stdout.strip()!r} (want {native.stdout.strip()!r})")
check.done()
