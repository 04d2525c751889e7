"""The width check (shim/width_check.hpp) leaves a computing job its processors. omp_rounds alone in
a table of P = 2, many short regions of dynamic loops (500 region ends a second): it must be probed
on half its CPUs now and then (trace column width_check) and never narrowed, since on one CPU it
gets about half as far; APSHIM_WIDTH_CHECK=0 checks nothing; throttled beside a stand-in co-runner
(one processor: no half) and at APSHIM_P=8 (processors that are not CPUs of their own) nothing is
checked either. Beside a CPU hog kept to one CPU, outside the table, the job is not held on the
hog's CPU: a probe there reads slower than wide (until the seventieth session it read 3x faster,
counting marks in the probe and none in the wide window, and the job spent 60% of its time there,
2.4 s -> 3.2 s). The native answer in every mode. The job it does narrow, xtb (sched_yield loops
between OpenMP and OpenBLAS threads), is tests/real/test_xtb.py."""
import os
import sys

from apshim_test import Check, CoRunner, Shim, phases_in_order, require_two_cpus, run_measured
from cpu_hog import OutsideHog

require_two_cpus("half of one processor is none: the check needs two")
build, prog = sys.argv[1], sys.argv[2]
shim = Shim(build)
check = Check("omp.width")
args = [prog, "300", "16", "500"]  # 300 regions over 16 items of 500 us: 1.2 s on two CPUs


def checksum(out):
    words = dict(w.split("=", 1) for w in out.split()[1:] if "=" in w)
    return words.get("checksum")


native = shim.native(args, timeout=60)
check.expect(native.returncode == 0 and checksum(native.stdout), f"runs natively ({native.returncode}: {native.stdout.strip()})")


def run(tag, co_runner=False, **env_kw):
    env = shim.env(gat=shim.path(f"gat-{tag}"), trace=shim.path(f"trace-{tag}-%p.csv"), **env_kw)
    if co_runner:
        with CoRunner(shim, env, 2):
            r = shim.run(args, env, timeout=60)
    else:
        r = shim.run(args, env, timeout=60)
    check.expect(r.returncode == 0 and checksum(r.stdout) == checksum(native.stdout),
                 f"{tag}: the native answer ({r.stdout.strip()} vs {native.stdout.strip()})")
    return phases_in_order(shim.trace_rows(f"trace-{tag}-"), "width_check")


phases = run("alone", P=2)
check.expect("probe" in phases and "narrowed" not in phases, f"alone: probed, never narrowed (phases in order {phases[:10]})")
for tag, kw in (("check off", {"P": 2, "APSHIM_WIDTH_CHECK": 0}), ("throttled", {"P": 2, "co_runner": True}),
                ("P=8", {"P": 8})):
    phases = run(tag, **kw)
    check.expect(phases == ["-"], f"{tag}: nothing checked (phases in order {phases[:10]})")

# Beside a hog kept to the first CPU, at the job's own priority: wide, the team gets about 1.5 CPUs;
# held on the hog's CPU, half of one. The threads' masks sampled every 20 ms (the controller's
# thread keeps every CPU; a narrowed team thread reads the one CPU it is kept to). Measured, clang
# and gcc, 2 runs each with autogroup on and off: the library before the fix (c9a32ad) had
# 0.45-0.49 of its thread-samples on the hog's CPU; with it 0.00-0.04 (a probe's cycles; 28 runs).
# Held on the other CPU is allowed: there a team whose waits spin can do as well as wide.
hog_cpu = min(os.sched_getaffinity(0))
HELD_AT_MOST = 0.15
with OutsideHog(nice=0, cpu=hog_cpu):  # both in this session: thread against thread, autogroup on or off
    env = shim.env(P=2, gat=shim.path("gat-hog"), trace=shim.path("trace-hog-%p.csv"))
    m = run_measured(args, env, 60, interval=0.02, session=False)
check.expect(m.returncode == 0 and checksum(m.stdout) == checksum(native.stdout),
             f"beside the hog: the native answer ({m.describe()}: {m.stdout.strip()})")
held = m.masks.get(str(hog_cpu), 0) / max(sum(m.masks.values()), 1)
print(f"beside a hog kept to CPU {hog_cpu}: thread masks sampled {m.masks}; phases in order "
      f"{phases_in_order(shim.trace_rows('trace-hog-'), 'width_check')[:10]}", flush=True)
check.expect(held <= HELD_AT_MOST, f"beside a hog kept to CPU {hog_cpu}: {held:.2f} of the thread-samples held "
             f"on its CPU, at most {HELD_AT_MOST}")
check.done()
