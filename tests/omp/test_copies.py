"""Two copies of one OpenMP runtime in a process, as Python has them: a wheel's vendored libgomp
(renamed by auditwheel) beside the system's. A host linking no OpenMP loads, RTLD_LOCAL, one module
linked with the system runtime and one with a renamed copy (omp_copies_host.c). Without the shim
each module runs its regions on its own copy. The shim forwarded every module's GOMP_parallel to
the first copy it found, while the module's omp_get_thread_num() (not interposed) asked its own:
every thread was thread 0 of 1, the static loop's sum came out twice, `single` ran twice. Under the
shim, in either load order, alone and throttled: the answers of a run without it, and the shim
says once that it adapts neither copy. gcc: each copy's spin count (read by each module in its
own libgomp) follows the job's situation, libgomp's own 300 000 alone and 0 while throttled
(confined): the shim once followed only one copy's, or none once it had seen two.
Usage: test_copies.py BUILD HOST MODULE_RENAMED MODULE_SYSTEM gcc|clang"""
import re
import sys

from apshim_test import Check, CoRunner, Shim, require_two_cpus

require_two_cpus("both copies' counts drop only while confined, which one CPU never is")
build, host, renamed, system, compiler = sys.argv[1:6]
shim = Shim(build)
check = Check(f"omp.{compiler}.copies")
# libomp aborts at a second copy's start unless told otherwise (its "OMP: Error #15").
extra = {"KMP_DUPLICATE_LIB_OK": "TRUE"} if compiler == "clang" else {}
said = "two copies of " + ("libgomp" if compiler == "gcc" else "libomp") + " loaded"


def spins(stderr):
    """Each module's (smallest, largest) spin count, gcc only (omp_copies_host.c)."""
    found = re.findall(r"^module (\d+) spin=(\d+)-(\d+)$", stderr, re.M)
    return {int(m): (int(lo), int(hi)) for m, lo, hi in found}


for order in ([renamed, system], [system, renamed]):
    argv = [host, "300"] + order
    first = "renamed" if order[0] == renamed else "system"
    # What the host prints does not depend on its rounds (each module's first answer, any wrong
    # one, the count of wrong ones), so the reference runs 50: natively each copy's threads spin
    # while the other's wait for the CPUs, and 300 rounds took 3.5-5.5 s on the 2-core dev VM.
    native = shim.native([host, "50"] + order, timeout=60, **extra)
    check.expect(native.returncode == 0, f"{first} first: right without the shim ({native.stdout.strip()[-300:]} "
                 f"{native.stderr.strip()[:200]})")
    r = shim.run(argv, shim.env(**extra), timeout=60)
    check.expect(r.returncode == 0 and r.stdout == native.stdout,
                 f"{first} first, alone: the same answers under the shim (rc {r.returncode}: {r.stdout.strip()[-300:]})")
    check.expect(said in r.stderr, f"{first} first, alone: says '{said}' ({r.stderr.strip()[:300]})")
    if compiler == "gcc":
        got = spins(r.stderr)
        check.expect(sorted(got) == [0, 1] and all(hi == 300000 for _, hi in got.values()),
                     f"{first} first, alone: both copies spin libgomp's own 300 000 rounds, as without the shim ({got})")
    env = shim.env(P=2, gat=shim.path(f"throttled-{first}"), **extra)
    with CoRunner(shim, env, P=2):
        r = shim.run(argv, env, timeout=60)
    check.expect(r.returncode == 0 and r.stdout == native.stdout,
                 f"{first} first, throttled: the same answers (rc {r.returncode}: {r.stdout.strip()[-300:]})")
    if compiler == "gcc":
        got = spins(r.stderr)
        check.expect(sorted(got) == [0, 1] and all(lo == 0 for lo, _ in got.values()),
                     f"{first} first, throttled: both copies' spin counts went to 0 while confined ({got})")
check.done()
