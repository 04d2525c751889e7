"""Teammates spinning on each other's flags with `#pragma omp flush` (NPB LU's pipeline), throttled
to allotment 1: confined to one CPU, a spinner must give the CPU to the teammate it waits for
instead of spinning out its time slice (adapters/omp/kmp_hooks.cpp, __kmpc_flush). Counted, not
timed: spins per handoff (a handful when the waiter yields; a time slice's worth, 10^5 and more,
when it does not: LU.S took 5-15 s against 0.03-0.17 s with one thread). clang builds only: gcc
inlines flush as a fence, which no hook sees (for it the test checks the answer only). Same answer
as natively."""
import sys

from apshim_test import Check, CoRunner, Shim, require_two_cpus, stdout_words

require_two_cpus("its spinner yields only while confined, which one CPU never is")
build, prog = sys.argv[1], sys.argv[2]
shim = Shim(build)
check = Check("omp.pipeline")
clang = prog.endswith("_clang")
args = [prog, "300", "300"]


def parse(out):
    words = stdout_words(out)
    return words.get("checksum"), float(words.get("spins_per_handoff", "nan"))


native = shim.native(args, timeout=60)
check.expect(native.returncode == 0, "runs natively")
env = shim.env(P=2, gat=shim.path("throttled"))
with CoRunner(shim, env, 2):
    r = shim.run(args, env, timeout=120)
check.expect(r.returncode == 0 and parse(r.stdout)[0] == parse(native.stdout)[0],
             f"throttled: the native answer ({r.stdout.strip()})")
if clang:
    spins = parse(r.stdout)[1]
    check.expect(spins < 1000, f"throttled: the waiting thread yields instead of spinning out its slice ({spins:.0f} spins per handoff)")
check.done()
