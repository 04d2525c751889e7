"""libgomp's spin-wait count follows the job's situation (adapters/omp/gomp_spin.cpp), read by the
program itself in libgomp's memory before each of thousands of short regions (omp_spin_count.c):
  - alone at desire P (APSHIM_POLICY=static: never throttled; the width check off, whose probes
    confine the job to half its CPUs for moments, as any confinement) the count is the shim's
    1000 (what libgomp read at its start) until the controller's first look, and libgomp's own
    300 000 from then on: nobody waits for the job's CPUs, and a program of regions with
    serial code between them should not pay a sleep and a wake-up per region (IQ-TREE takes
    1.17x its time with 1000 natively); it ends at 300 000;
  - throttled to allotment 1 beside a co-runner that wants more (two threads confined to one
    CPU), the count drops to 0, since a
    waiting thread's spin only keeps the teammate it waits for from the CPU (scikit-learn's
    gradient boosting took 6.1-6.4 s confined with 1000 rounds, 3.1-3.3 s with 0, 2.7-3.1 s with one
    thread natively), and is 1000 again while the job runs unconfined (its start, probes), so
    that an idle thread gives the co-runner its CPU back at once: the largest count read is 1000;
  - libgomp's count for more threads than the CPUs it saw at its start (100 beside the shim's
    1000) follows the same way: 100 alone, 0 while confined (16 threads confined to one CPU spun
    100 rounds a wait: a scikit-learn fit took 8.0 s, 4.5 s with 0); the user's count keeps it;
  - APSHIM_CONFINE=0 beside that co-runner: nothing shares CPUs, the count stays 1000;
  - a GOMP_SPINCOUNT the user set is never touched, throttled or not.
A state, not a time: what libgomp reads at its waits.
With --pypi the program runs on the libgomp that PyPI wheels vendor (scikit-learn 1.9.1's
scikit_learn.libs/libgomp-<hash>.so.1.0.0, GCC 8.5's, as xgboost's): there one variable lies
between the two counts, and the shim once missed them (its threads spun 1000 rounds at every
wait while confined). Skipped (77) when scripts/fetch-runtimes.sh could not fetch it.
Usage: test_spin_count.py BUILD PROGRAM [--pypi]"""
import os
import re
import sys

from apshim_test import Check, CoRunner, Shim, pypi_libgomp_program, require_two_cpus

require_two_cpus("libgomp's count drops only while confined, which one CPU never is")
build, prog = sys.argv[1], sys.argv[2]
shim = Shim(build)
check = Check("omp.spin_count")
extra = {}
if "--pypi" in sys.argv[3:]:
    prog, lib, how = pypi_libgomp_program(build, prog)
    if prog is None:
        print(f"SKIP: PyPI's vendored libgomp is not here ({how})", flush=True)
        sys.exit(77)
    extra = {"LD_LIBRARY_PATH": os.path.dirname(lib)}
    print(f"on {lib}", flush=True)


def counts(env, seconds=1.5, user_spin=None):
    """(start, min, max, regions, (tstart, tmin, tmax), end) as the program read them (t: the count
    for oversubscription); the user's spin setting only if given."""
    env = {k: v for k, v in env.items() if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}
    if user_spin is not None:
        env["GOMP_SPINCOUNT"] = user_spin
    r = shim.run([prog, str(seconds)], env, timeout=60)
    m = re.search(r"found=(\d+) start=(\d+) min=(\d+) max=(\d+) tstart=(-?\d+) tmin=(-?\d+) tmax=(-?\d+) regions=(\d+) "
                  r"checksum=\d+ end=(\d+)", r.stdout)
    if not check.expect(r.returncode == 0 and m is not None, f"runs and reads the count ({r.stdout.strip()!r:.120})"):
        return None
    found, start, lo, hi, tstart, tlo, thi, regions, end = map(int, m.groups())
    check.expect(found == 1, f"exactly one candidate for the count in libgomp's memory ({found})")
    check.expect(tstart >= 0, f"the count for oversubscription is told apart beside it ({tstart})")
    return start, lo, hi, regions, (tstart, tlo, thi), end


alone = counts(shim.env(APSHIM_POLICY="static", APSHIM_WIDTH_CHECK=0, **extra))
if alone:
    check.expect(alone[1] in (1000, 300000) and alone[2] == 300000 and alone[5] == 300000,
                 f"alone: libgomp's own 300 000 rounds from the first cycle on, the shim's 1000 at most before "
                 f"(start, min, max, end: {alone[0:3]}, {alone[5]})")
    check.expect(alone[4] == (100, 100, 100), f"alone: its count for oversubscription stays 100 ({alone[4]})")

env = shim.env(P=2, gat=shim.path("throttled"), **extra)
with CoRunner(shim, env, 2):
    thr = counts(env)
    if thr:
        check.expect(thr[1] == 0 and thr[2] == 1000,
                     f"throttled: 0 rounds while confined, 1000 while not (min {thr[1]}, max {thr[2]} over {thr[3]} regions)")
        check.expect(thr[4][1:] == (0, 100),
                     f"throttled: the count for oversubscription 0 while confined, 100 while not (min, max: {thr[4][1:]})")
    unconfined = counts(dict(env, APSHIM_CONFINE="0"), seconds=0.5)
    if unconfined:
        check.expect(unconfined[1:3] == (1000, 1000),
                     f"throttled, APSHIM_CONFINE=0: nothing shares CPUs, 1000 throughout ({unconfined[1:3]})")
        check.expect(unconfined[4][1:] == (100, 100), f"throttled, APSHIM_CONFINE=0: 100 for oversubscription ({unconfined[4]})")
    user = counts(env, seconds=0.5, user_spin="2000")
    if user:
        check.expect(user[0:3] == (2000, 2000, 2000) and user[4] == (100, 100, 100),
                     f"throttled: the user's GOMP_SPINCOUNT=2000 is kept, and libgomp's 100 beside it ({user[0:3]}, {user[4]})")
check.done()
