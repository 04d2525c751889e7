"""NPB LU's shape throttled to allotment 1 (tests/omp/omp_sweeps.c): pipelined sweeps whose threads
spin on each other's flags in the program's own code, making no progress marks, between loops
that make them, all in one parallel region. Built with gcc, a sweep of 10 ms unconfined takes
about a second confined; the confinement check (shim/confine_check.hpp) must see that stall as
one, though it makes no marks, and leave the job unconfined for most of its run. The count that
says so: the share of the controller's cycles (trace rows) that ran confined, a decision of the
check's and not a time. On the idle 2-core VM: 0.11-0.37 in 10 runs of 11 (0.12 where the
start's comparison is confirmed at once, about 0.30 where the confirmation fails and looks
follow), 0.52 in one whose start made no marks (the kernel had left the main thread and the
worker on one CPU throughout it); 0.47-0.72 in 10 runs with 0766b8a's library, whose window
began at its first mark and so skipped each stalled sweep (3.6-9.5 s, against 1.7 s natively and
1.8 s with one thread); 0.41-0.95 before e12d9b0's looks (3.4-41 s). A start like that one, or
a neighbour's burst on the second CPU failing a look's probe (the intervals then grow), can
push one run over, so up to three runs, one of which must stay under 0.45. clang builds yield at
the flush (kmp_hooks.cpp): only the answer is checked there. Same answer as natively in every
run."""
import sys

from apshim_test import Check, CoRunner, Shim, phases_in_order, require_two_cpus, stdout_words

require_two_cpus("the confinement check it exercises needs a CPU to confine from")
build, prog = sys.argv[1], sys.argv[2]
shim = Shim(build)
check = Check("omp.sweeps")


def parse(out):
    words = stdout_words(out)
    return words.get("checksum"), float(words.get("spins_per_handoff", "nan"))


args = [prog, "150", "200", "34", "13500"]
native = shim.run(args, shim.env(preload=False), timeout=60)
check.expect(native.returncode == 0, f"runs natively ({native.returncode}: {native.stdout.strip()})")
gcc = prog.endswith("_gcc")
shares = []
for attempt in range(3 if gcc else 1):
    env = shim.env(P=2, gat=shim.path(f"throttled{attempt}"), trace=shim.path(f"trace{attempt}-%p.csv"))
    with CoRunner(shim, env, 2):
        r = shim.run(args, env, timeout=120)
    check.expect(r.returncode == 0 and parse(r.stdout)[0] == parse(native.stdout)[0],
                 f"throttled: the native answer ({r.stdout.strip()} against {native.stdout.strip()})")
    if not gcc:
        break
    rows = shim.trace_rows(f"trace{attempt}-")
    order = phases_in_order(rows)
    shares.append(round(sum(row["confine_check"] == "confined" for row in rows) / max(len(rows), 1), 2))
    print(f"run {attempt + 1}: confined in {shares[-1]} of {len(rows)} cycles; phases {order[:12]}; "
          f"spins per hand-over {parse(r.stdout)[1]:.0f}, natively {parse(native.stdout)[1]:.0f}", flush=True)
    if shares[-1] < 0.45:
        break
if gcc:
    check.expect(shares[-1] < 0.45, f"throttled: confined in under 0.45 of its cycles in one run of up to three ({shares})")
check.done()
