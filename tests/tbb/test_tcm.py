"""The shim serves oneTBB's thread composability interface (adapters/tbb/tcm_server.hpp).

A client asking as oneTBB 2021.11+ does (tcm_client): without the shim there is no TCM; with it,
the permit first grants what was asked (no allotment yet) and, once the idle job's allotment is 1,
falls to the one-worker floor through a callback; TCM_ENABLE=0 refuses the connection, so TBB keeps
its own market. Then the PyPI oneTBB wheel (scripts/fetch-runtimes.sh), which links TCM weakly:
it connects to the shim (its TBB_VERSION report names apshim), and tbb_rounds gives the native
answer alone, throttled to allotment 1 (at most 2 threads per round: main + the floor's worker),
and at APSHIM_P=8."""
import glob
import os
import sys

from apshim_test import Check, CoRunner, Shim

build, client, rounds_prog = sys.argv[1], sys.argv[2], sys.argv[3]
shim = Shim(build)
check = Check("tbb.tcm")


def grants(out):
    return [(int(l.split()[0][2:]), int(l.split()[1][8:]), int(l.split()[2][10:])) for l in out.splitlines() if l.startswith("t=")]


r = shim.native([client, "3", "300"])
check.expect(r.stdout.strip() == "no TCM", f"without the shim the process has no TCM ({r.stdout.strip()!r})")
r = shim.run([client, "3", "300"], shim.env(P=4, gat=shim.path("off"), TCM_ENABLE=0))
check.expect(r.stdout.strip() == "connect refused", f"TCM_ENABLE=0: the shim refuses, TBB keeps its market ({r.stdout.strip()!r})")
# APSHIM_USE_IDLE=0: alone, the job would keep the processors nobody holds, and its grant with them.
r = shim.run([client, "3", "1500"], shim.env(P=4, gat=shim.path("on"), est_cycle_ms=20, APSHIM_USE_IDLE=0))
g = grants(r.stdout)
check.expect(r.returncode == 0 and g and g[0][1] == 3, f"before any allotment the permit grants what was asked (3): {g[:2]}")
check.expect(g and g[-1][1] == 1 and g[-1][2] >= 1,
             f"an idle job's allotment 1 leaves its arena the one-worker floor, told by callback: {g[-1] if g else None}")

wheel = glob.glob(os.path.join(build, "runtimes", "tbb-wheel", "*.data", "data", "lib", "libtbb.so.12"))
if not wheel:
    print("SKIP the oneTBB wheel part: not fetched here (scripts/fetch-runtimes.sh)", flush=True)
    check.done()
lib = os.path.dirname(wheel[0])
args = [rounds_prog, "12", "200", "200"]


def answer(out):
    return out.split("time_s=")[0]


native = shim.native(args, timeout=120, LD_LIBRARY_PATH=lib)
check.expect(native.returncode == 0 and "checksum=" in native.stdout, "tbb_rounds runs natively on the wheel")
v = shim.run(args, shim.env(P=4, gat=shim.path("v"), LD_LIBRARY_PATH=lib, TBB_VERSION=1, APSHIM_LOG="info"), timeout=120)
check.expect("TCM: VERSION            apshim" in v.stderr, "the wheel's oneTBB reports the shim as its TCM")
check.expect("thread composability manager" in v.stderr, "the shim says once that it serves TCM")
check.expect(v.returncode == 0 and answer(v.stdout) == answer(native.stdout), "alone at APSHIM_P=4: the native answer")
env = shim.env(P=4, gat=shim.path("throttled"), LD_LIBRARY_PATH=lib)
with CoRunner(shim, env, 4):
    t = shim.run(args, env, timeout=120)
per_round = [int(l.split()[3]) for l in t.stderr.splitlines() if l.startswith("round")]
check.expect(t.returncode == 0 and answer(t.stdout) == answer(native.stdout), "throttled to allotment 1: the native answer")
# The first rounds run before the first allotment; from the middle on the grant is in force.
late = per_round[len(per_round) // 2:]
check.expect(late and max(late) <= 2, f"throttled: at most main + one worker execute per round in the later rounds ({per_round})")
big = shim.run(args, shim.env(P=8, gat=shim.path("p8"), LD_LIBRARY_PATH=lib), timeout=120)
check.expect(big.returncode == 0 and answer(big.stdout) == answer(native.stdout), "APSHIM_P=8: the native answer")
check.done()
