"""Loops whose threads wait for each other's turns (LLVM's omp_for_ordered and
kmp_set_dispatch_buf shapes, tests/omp/omp_turns.c) at allotment 1, with and without CPU
confinement: the same answer, and no stall. Before the fix, a thread parked before its next
chunk of an ordered loop held the turn its teammate spun for: about a second per park (537 s for
LLVM's test with APSHIM_CONFINE=0; with confinement, a second in the first region, parked in the
moment between the limit falling and the threads being confined); a thread ahead in nowait
loops spun for a parked one's dispatch buffer the same way. The spinning shows as CPU time: the
whole program needs a few tens of milliseconds. Every ordered turn is a progress mark for the
confinement check (trace column `marks`): a longer ordered loop must show them."""
import sys

from apshim_test import Check, CoRunner, Shim, any_sanitizer_preloaded, run_measured

build, prog = sys.argv[1], sys.argv[2]
shim = Shim(build)
check = Check("omp.turns")
cases = {"ordered": ["ordered", "300", "4"], "nowait": ["nowait", "16", "300"]}
native = {}
for name, args in cases.items():
    r = shim.native([prog] + args, timeout=60, OMP_NUM_THREADS="2")
    check.expect(r.returncode == 0 and r.stdout.startswith("ok"), f"{name}: native run ({r.returncode})")
    native[name] = r.stdout
env = shim.env(P=2, OMP_NUM_THREADS="2")
with CoRunner(shim, env, P=2):
    for confine in ("1", "0"):
        for name, args in cases.items():
            for rep in range(3):
                m = run_measured([prog] + args, dict(env, APSHIM_CONFINE=confine), timeout=30)
                what = f"{name}, APSHIM_CONFINE={confine}, run {rep + 1}: {m.describe()}"
                check.expect(not m.timed_out, f"{what}: finished")
                check.expect(m.returncode == 0 and m.stdout == native[name], f"{what}: same answer")
                # A park that a teammate spins through costs about a second of CPU.
                check.expect(m.cpu_s < 0.5, f"{what}: no teammate spun through a park (under 0.5 s CPU)")

# Every ordered turn is a progress mark while the hooks time (GOMP_ordered_start, __kmpc_ordered:
# what the confinement check compares; LLVM's omp_for_collapse takes 98 010 turns). The loop is
# schedule(static, 1): libgomp fetches no chunk through a hook, so without the turns a run marks
# only its barriers; libomp fetches each iteration (one mark each), and the turns double that.
# Marks count only once the controller's first cycle turned timing on: the loop runs about 0.2 s
# (libgomp's turns are cheaper, hence more of them) so that a first cycle delayed by a loaded
# machine costs a small part of them (at 0.04 s, one full ctest -j2 run fell below the bar).
gcc = prog.endswith("_gcc")
N, R = 2000, 1000 if gcc else 200
# Under TSan (this test's only sanitizer stage) each turn's wait frame costs tens of times more:
# a quarter of the rounds still runs longer than unsanitized (12 s for the whole test with all).
if any_sanitizer_preloaded():
    R //= 4
turns = N * R
per_turn = 0.6 if gcc else 1.6
env_m = shim.env(P=2, gat=shim.path("marks.gat"), trace=shim.path("marks-%p.csv"), OMP_NUM_THREADS="2")
with CoRunner(shim, env_m, P=2):
    r = shim.run([prog, "ordered", str(N), str(R)], env_m, timeout=60)
check.expect(r.returncode == 0 and r.stdout.startswith("ok"), f"ordered {N} x {R} throttled: same answer ({r.returncode})")
marks = sum(row["marks"] for row in shim.trace_rows("marks-"))
check.expect(marks >= per_turn * turns, f"ordered {N} x {R} throttled: {marks} progress marks for {turns} ordered turns "
             f"(at least {per_turn:.1f} a turn: the turns are marked)")
check.done()
