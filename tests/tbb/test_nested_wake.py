"""A worker parked inside a nested wait goes on the moment that wait is over, with parking only
(APSHIM_CONFINE=0, as where the user binds threads), throttled to allotment 1 by a co-runner.
tbb_fib computes fib(27) 600 times, each about a millisecond on one CPU: in every round the worker
steals the root's first child, parks in its first nested wait while the main thread runs the
children it left, and the main thread then waits for the worker's task. r1::notify_waiters,
interposed, wakes the worker when its wait's count reaches 0 (adapters/tbb/task_hooks.cpp,
maybe_park_nested). Without that wake it waited for its next re-check, an est_cycle: 5.2 s for
1000 rounds at 0.42 CPUs against 1.1 s at 0.97 with it (5 ms cycles). Here the cycle is 40 ms
and a round of 20 ms or more counts as long: with the wake a round takes about 1 ms; without it
most rounds would be long. Counted, not timed: at most 10% of the rounds may be long. Under a
sanitizer the count is printed, not judged: the instrumented task hooks alone make a round of
about 4000 tasks last milliseconds more (tbb.enforce does the same with its CPU reading)."""
import sys

from apshim_test import Check, CoRunner, Shim, any_sanitizer_preloaded

build, prog = sys.argv[1], sys.argv[2]
shim = Shim(build)
check = Check("tbb.nested_wake")
ROUNDS, LONG_MS = 600, 20
args = [prog, "27", "10", str(ROUNDS), str(LONG_MS)]
native = shim.native(args, timeout=60)
check.expect(native.returncode == 0 and native.stdout.startswith("fib(27) = 196418\n"), f"runs natively ({native.stdout.strip()})")
for attempt in range(2):
    env = shim.env(P=2, gat=shim.path(f"gat{attempt}"), est_cycle_ms=40, APSHIM_CONFINE=0)
    with CoRunner(shim, env, P=2):
        r = shim.run(args, env, timeout=60)
    lines = r.stdout.splitlines()
    check.expect(r.returncode == 0 and lines[:1] == ["fib(27) = 196418"], f"run {attempt}: the same result ({r.stdout.strip() or r.returncode})")
    long_rounds = int(lines[1].split()[1]) if len(lines) == 2 and lines[1].startswith("long ") else None
    if any_sanitizer_preloaded():
        print(f"under a sanitizer, not judged: run {attempt}: {long_rounds} of {ROUNDS} rounds of {LONG_MS} ms or more", flush=True)
        continue
    check.expect(long_rounds is not None and long_rounds <= ROUNDS // 10,
                 f"run {attempt}: at most {ROUNDS // 10} of {ROUNDS} rounds last {LONG_MS} ms or more, at allotment 1 with "
                 f"parking only ({long_rounds})")
check.done()
