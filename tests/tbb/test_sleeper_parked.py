"""A task that sleeps in user code for work that only a parked worker would bring, while only
parking holds the job (APSHIM_CONFINE=0, as where the user binds threads), throttled to allotment 1
by a co-runner (tbb_sleeper: the main thread, inside a task, sleeps until a chain of enqueued
tasks is done, each step an outermost task of a worker's). The sleeping main thread reads busy, so
only the CPU escape lets the parked worker go on, one worker per reading of the clocks; parked
again after each step, it ran one step per reading: 10 of 100 rounds in 10 s, each 1 s (4 ms
natively). Now the worker the CPU escape let go keeps going while the job uses no more than its
allotment by half a processor (adapters/tbb/task_hooks.cpp, keep_going): 100 rounds in 0.45 s at
about one CPU. Counted, not timed: every round runs (none begins after 10 s) and at most 10 of
100 last 50 ms or more. The same crawl stalled oneTBB's test_task_group once parking held programs
that set their own thread count (docs/enforcement.md, seventy-eighth session)."""
import sys

from apshim_test import Check, CoRunner, Shim, any_sanitizer_preloaded

build, prog = sys.argv[1], sys.argv[2]
shim = Shim(build)
check = Check("tbb.sleeper_parked")
ROUNDS, STEPS, LONG_MS, MOST_LONG = 100, 200, 50, 10
args = [prog, str(ROUNDS), str(STEPS), str(LONG_MS)]
native = shim.native(args, timeout=60)
check.expect(native.returncode == 0 and native.stdout.split() == ["rounds", str(ROUNDS), "long", "0"],
             f"natively every round runs, none takes {LONG_MS} ms ({native.stdout.strip()})")
for attempt in range(2):
    env = shim.env(P=2, gat=shim.path(f"gat{attempt}"), APSHIM_CONFINE=0)
    with CoRunner(shim, env, P=2):
        r = shim.run(args, env, timeout=60)
    words = r.stdout.split()
    ok = r.returncode == 0 and len(words) == 4
    check.expect(ok and words[1] == str(ROUNDS), f"run {attempt}: all {ROUNDS} rounds run within 10 s ({r.stdout.strip() or r.returncode})")
    if ok and any_sanitizer_preloaded():
        print(f"under a sanitizer, not judged: run {attempt}: {words[3]} of {words[1]} rounds of {LONG_MS} ms or more", flush=True)
    elif ok:
        check.expect(int(words[3]) <= MOST_LONG * int(words[1]) // ROUNDS,
                     f"run {attempt}: at most one round in {ROUNDS // MOST_LONG} lasts {LONG_MS} ms or more, parked at "
                     f"allotment 1 with parking only ({words[3]})")
check.done()
