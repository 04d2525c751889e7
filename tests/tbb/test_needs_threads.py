"""A program that sets TBB's max_allowed_parallelism itself and needs those threads (tasks waiting
for each other) finishes under the shim: the shim steps aside instead of capping. Above the cores
(4 on a table of P = 2), and at TBB's default (4 at APSHIM_P=4) while throttled to allotment 1 by
a co-runner: there the shim's cap (2) sat under the program's 4 and the barrier never filled, as
in oneTBB's test_task_arena at APSHIM_P=8 (tests/peer/RESULTS.md). And the same barrier sized by
TBB's default alone, no global_control, throttled: the stall valve lifts the cap (it hung before).
And alone with APSHIM_P=4 on a table created with P = 2 (APSHIM_P ignored at the join): libtbb was
shown 4 CPUs before, the shim's cap is 2, and the shim must know it holds TBB back (PrusaSlicer
hung there: the valve, blind to untimed tasks, never lifted the cap; 1 run in 3 of this)."""
import sys

from apshim_test import Check, CoRunner, Shim

build, prog = sys.argv[1], sys.argv[2]
shim = Shim(build)
check = Check("tbb.needs_threads")
for attempt in range(3):
    r = shim.run([prog], shim.env(P=2, gat=shim.path(f"gat{attempt}")), timeout=30)
    check.expect(r.returncode == 0 and r.stdout.strip() == "all 4 met", f"run {attempt}: finishes ({r.stdout.strip()})")
for attempt in range(3):
    env = shim.env(P=4, gat=shim.path(f"throttled{attempt}"))
    with CoRunner(shim, env, 4):
        r = shim.run([prog, "4"], env, timeout=30)
    check.expect(r.returncode == 0 and r.stdout.strip() == "all 4 met",
                 f"throttled run {attempt}: global_control(4) at TBB's default 4, finishes ({r.stdout.strip()})")
for attempt in range(3):
    env = shim.env(P=4, gat=shim.path(f"nocontrol{attempt}"))
    with CoRunner(shim, env, 4):
        r = shim.run([prog, "4", "nocontrol"], env, timeout=30)
    check.expect(r.returncode == 0 and r.stdout.strip() == "all 4 met",
                 f"throttled run {attempt}: no global_control, 4 tasks meet at TBB's default 4, finishes ({r.stdout.strip()})")
shim.run([prog, "1", "nocontrol"], shim.env(P=2, gat=shim.path("made_at_2")), timeout=30)
for attempt in range(5):
    r = shim.run([prog, "4", "nocontrol"], shim.env(P=4, gat=shim.path("made_at_2")), timeout=30)
    check.expect(r.returncode == 0 and r.stdout.strip() == "all 4 met",
                 f"alone on a table of P = 2, APSHIM_P=4 shown to libtbb, run {attempt}: 4 tasks meet, finishes "
                 f"({r.stdout.strip() or r.returncode})")
env = shim.env(P=4, gat=shim.path("replace"))
with CoRunner(shim, env, 4):
    r = shim.run([prog, "4", "replace"], env, timeout=30)
# TBB's default here is 4 (APSHIM_P=4 shown to libtbb), the shim's cap at allotment 1 is 2. Under a
# preloaded sanitizer libtbb sees the real CPUs and both may be 2: then this cannot tell.
words = r.stdout.split()
check.expect(r.returncode == 0 and words[:3] == ["all", "4", "met"] and len(words) == 7 and words[3] == "before"
             and words[5] == "active" and words[6] == words[4] and int(words[6]) >= 2,
             f"throttled: after the program dropped its own control the shim has not capped TBB again "
             f"(TBB's limit is its default, not the shim's 2: {r.stdout.strip()!r})")
# Where confinement cannot hold the job either (APSHIM_CONFINE=0, as where the user binds threads),
# parking holds it, at its task boundaries, and its tasks that meet each other still finish: nothing
# to say (until the seventy-eighth session nothing held it, and the shim said so). Where parking
# cannot be either (a collector of the user's own in INTEL_LIBITTNOTIFY64: oneTBB calls no task hook
# of the shim's), nothing holds its oneTBB threads: said once (NPB-CPP's NPB-TBB ran on both CPUs at
# allotment 1 of 2 with APSHIM_CONFINE=0 without a word). Confined, nothing to say.
UNHELD = "its oneTBB threads are not throttled"
for confine, collector, want in (("0", None, 0), ("0", "/nonexistent/libcollector.so", 1), ("1", None, 0)):
    env = shim.env(P=2, gat=shim.path(f"unheld{confine}{want}"), APSHIM_CONFINE=confine)
    if collector:
        env["INTEL_LIBITTNOTIFY64"] = collector
    with CoRunner(shim, env, 2):
        r = shim.run([prog, "2", "replace"], env, timeout=30)  # lives 100 ms more: cycles of allotment 1
    said = r.stderr.count(UNHELD)
    what = f"APSHIM_CONFINE={confine}" + (", INTEL_LIBITTNOTIFY64 of the user's" if collector else "")
    check.expect(r.returncode == 0 and r.stdout.startswith("all 2 met") and said == want,
                 f"throttled, {what}: finishes, '{UNHELD}' said {said} times "
                 f"({'once' if want else 'never'} wanted; stderr {r.stderr.strip()[-200:]!r})")
check.done()
