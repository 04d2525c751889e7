"""The width check (shim/width_check.hpp) leaves a computing job its processors. omp_rounds alone in
a table of P = 2, many short regions of dynamic loops (500 region ends a second): it must be probed
on half its CPUs now and then (trace column width_check) and never narrowed, since on one CPU it
gets about half as far; APSHIM_WIDTH_CHECK=0 checks nothing; throttled beside a stand-in co-runner
(one processor: no half) and at APSHIM_P=8 (processors that are not CPUs of their own) nothing is
checked either. The native answer in every mode. The job it does narrow, xtb (sched_yield loops
between OpenMP and OpenBLAS threads), is tests/real/test_xtb.py."""
import sys

from apshim_test import Check, CoRunner, Shim, phases_in_order, require_two_cpus

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
check.done()
