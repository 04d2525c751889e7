"""libomp's blocktime follows confinement and the co-runners (adapters/omp/kmp_hooks.cpp,
follow_blocktime): 0 while the job's threads share fewer CPUs than they are (a worker spinning at a
region's end kept the thread that forks the next region off the CPU: tiny regions throttled made
19 000 a second at the shim's 1 ms, 39 000 at 0), the shim's 1 ms while a co-runner wants more
processors (or none is known not to: before the controller's first look), libomp's own 200 ms
while nobody waits for the job's CPUs (regions 2 ms apart ran 1.09x as long with 1 ms), and left
alone where the user or the program chose it (a choice made on another thread gives this one the
shim's default back).
omp_blocktime's thread 1 reads the blocktime its team was forked with, region by region; the
answer is the native one in every mode."""
import sys

from apshim_test import Check, CoRunner, Shim, require_two_cpus, stdout_words

require_two_cpus("blocktime 0 follows confinement, which one CPU never is")
build, prog = sys.argv[1], sys.argv[2]
shim = Shim(build)
check = Check("omp.blocktime")


def reading(out):
    words = stdout_words(out)
    return {k: int(v) for k, v in words.items()}


def run(tag, env, args=(), corunner_s=None):
    argv = [prog, "150", "10", *args]
    if corunner_s is None:
        r = shim.run(argv, env, timeout=90)
    else:
        with CoRunner(shim, env, 2, seconds=corunner_s):
            r = shim.run(argv, env, timeout=90)
    ok = r.returncode == 0 and "checksum=" in r.stdout
    check.expect(ok, f"{tag}: runs ({r.returncode}: {r.stdout.strip()} {r.stderr.strip()[:200]})")
    return reading(r.stdout) if ok else {}


native = run("natively", shim.env(preload=False))
# Alone with the width check off: its probes confine the job to half its CPUs for moments, and the
# blocktime follows them as it follows any confinement.
alone = run("alone", shim.env(gat=shim.path("gat-alone"), APSHIM_WIDTH_CHECK=0))
check.expect(alone.get("zero") == 0 and alone.get("last") == 200,
             f"alone: never 0, libomp's own 200 ms at the end ({alone})")
# Throttled while the co-runner holds the table (1.2 s), then alone in it: 0, then libomp's 200 ms.
# The width check off here too: once the job has both CPUs again its first probe comes within
# 0.3 s, and a probe that spans the last round reads 0 (CI's TSan stage once read last=0 so).
env = shim.env(P=2, gat=shim.path("throttled"), APSHIM_WIDTH_CHECK=0)
thr = run("throttled, then alone", env, corunner_s=1.2)
check.expect(thr.get("zero", 0) > 0, f"throttled: the team waited with blocktime 0 while confined ({thr})")
check.expect(thr.get("last") == 200, f"throttled: libomp's own 200 ms once the co-runner left ({thr})")
user = run("throttled, KMP_BLOCKTIME=5", shim.env(P=2, gat=shim.path("user"), KMP_BLOCKTIME=5), corunner_s=60)
check.expect(user.get("zero") == 0 and user.get("last") == 5, f"the user's KMP_BLOCKTIME is kept ({user})")
own = run("throttled, the program sets 7", shim.env(P=2, gat=shim.path("own")), ("7",), corunner_s=60)
check.expect(own.get("zero") == 0 and own.get("first") == 7 and own.get("last") == 7,
             f"the program's own kmp_set_blocktime is kept ({own})")
# Another thread of the program sets its own blocktime after round 75 (libomp: that thread's only):
# the main thread's teams, which waited with the shim's 0 while confined, get the shim's 1 ms back
# rather than keep that 0 for good.
other = run("throttled, another thread sets 7", shim.env(P=2, gat=shim.path("other")), ("7@75",), corunner_s=60)
check.expect(other.get("zero", 0) > 0 and other.get("last") == 1,
             f"another thread's kmp_set_blocktime: 0 while confined before it, the shim's 1 ms after ({other})")
# One region for the whole run, forked before the job was confined (before the controller's
# first look: the shim's 1 ms): its threads follow at the barriers between its loops, 0 while
# confined and libomp's 200 ms once the co-runner left.
region = run("one region, throttled, then alone", shim.env(P=2, gat=shim.path("region"), APSHIM_WIDTH_CHECK=0),
             ("region",), corunner_s=1.2)
check.expect(region.get("first") == 1 and region.get("zero", 0) > 0 and region.get("last") == 200,
             f"one region: the shim's 1 ms at its fork, 0 while confined, libomp's 200 ms after ({region})")
p8 = run("P=8", shim.env(P=8, gat=shim.path("p8")))
for tag, m in (("alone", alone), ("throttled", thr), ("user's", user), ("program's own", own),
               ("another thread's", other), ("one region", region), ("P=8", p8)):
    check.expect(m.get("checksum") == native.get("checksum"), f"{tag}: the native answer ({m.get('checksum')} vs {native.get('checksum')})")
check.done()
