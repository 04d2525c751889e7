"""Tasks on one CPU run at once (adapters/omp/README.md; APSHIM_INLINE_TASKS), for one compiler's
build of omp_inline. Counted, not timed: after each task construct inside a task, whether the child
had finished already.
  - throttled (a stand-in co-runner holds the rest of a table of P = 2, so the job is confined
    to one CPU): every nested task ran at once (queued = 0), and the top-level task that spins
    until its parent sets a flag still finished (it is left queued: run at once, it would hang);
  - throttled with APSHIM_INLINE_TASKS=0, and alone (two CPUs): the runtime queues them, as
    without the shim (most nested tasks unfinished after their construct): the switch and the
    one-CPU condition both hold;
  - the same leaves and nested counts as natively in every run.
Usage: test_inline.py BUILD OMP_INLINE"""
import sys

from apshim_test import Check, CoRunner, Shim, require_two_cpus, stdout_words

require_two_cpus("tasks run at once only while confined, which one CPU never is")
build, prog = sys.argv[1], sys.argv[2]
shim = Shim(build)
check = Check("omp.inline")
args = [prog, "11", "300"]


native = shim.native(args, timeout=60)
check.expect(native.returncode == 0, f"runs natively ({native.stderr.strip()[:200]})")
want = stdout_words(native.stdout)
nested = int(want["nested"])
check.expect(nested == 2 ** 12 - 4 and want["waiter"] == "ok", f"native: {native.stdout.strip()}")


def run(label, env, co_runner):
    if co_runner:
        with CoRunner(shim, env, 2):
            r = shim.run(args, env, timeout=60)
    else:
        r = shim.run(args, env, timeout=60)
    got = stdout_words(r.stdout) if r.returncode == 0 else {}
    check.expect(r.returncode == 0 and all(got.get(k) == want[k] for k in ("leaves", "nested", "waiter")),
                 f"{label}: the native counts and the waiting task finished ({r.stdout.strip()} {r.stderr.strip()[:200]})")
    return int(got.get("queued", -1))


throttled = run("throttled", shim.env(P=2, gat=shim.path("throttled")), True)
check.expect(throttled == 0, f"throttled: every nested task ran at once ({throttled} of {nested} queued)")
off = run("throttled, APSHIM_INLINE_TASKS=0", shim.env(P=2, gat=shim.path("off"), APSHIM_INLINE_TASKS=0), True)
check.expect(off > nested // 2, f"throttled with APSHIM_INLINE_TASKS=0: the runtime queues them ({off} of {nested})")
alone = run("alone", shim.env(P=2, gat=shim.path("alone")), False)
check.expect(alone > nested // 2, f"alone on two CPUs: the runtime queues them ({alone} of {nested})")
check.done()
