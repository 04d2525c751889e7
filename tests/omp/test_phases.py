"""A job whose only quick progress is a burst of region ends is not hand-over bound
(shim/confine_check.hpp, adapters/common/busy.hpp: region_ends). GraphicsMagick's blur, throttled to
allotment 1, was left unconfined for a second at a time (1.25-1.31 CPUs in 2 of 5 runs of
real.gm_blur): libgomp's region ends counted as progress marks, its few large regions made 4 in
0.5 s confined, and a probe that met a burst of small regions between passes read 40x as many per
CPU-second. omp_phases makes that shape on purpose: a 60 ms burst of tiny regions (inside the
job's 100 ms unconfined start), then large regions of static loops (a region end every 20 ms). Throttled beside a stand-in
co-runner it must stay confined (no `handover` rows, nothing said on stderr) while the region
ends are still counted (the idle check's progress: trace column region_ends); same answer as
natively, there, alone and at APSHIM_P=8. With region ends as marks (da7e025) the start read about 1000x as far as the first 50 ms confined.
The clang build (libomp) failed the same way until its join barriers were told from loops' barriers
(adapters/omp/ompt_hooks.cpp, ends_region): at b4cdbd4, 586-690x in 3 of 3 runs, no region end counted.
Then cdo's shape: serial code after the start (CPU without marks), then a dynamic loop (chunks are
marks). It must be probed and kept confined: with the confined window counted from the start of
confinement rather than from its first mark, the probe that met the first chunks read 84-399x (26cc5e3)."""
import sys

from apshim_test import Check, CoRunner, Shim, phases_in_order, require_two_cpus, stdout_words

require_two_cpus("the region ends are counted only while confined, which one CPU never is")
build, prog = sys.argv[1], sys.argv[2]
shim = Shim(build)
check = Check("omp.phases")


def checksum(out):
    words = stdout_words(out)
    return words.get("checksum")


def throttled(tag, args):
    """`args` natively, then throttled beside a stand-in co-runner, checked for the native answer and
    for saying nothing about hand-overs: (the native run, the throttled run's trace rows, their
    phases in order)."""
    native = shim.run(args, shim.env(preload=False), timeout=60)
    check.expect(native.returncode == 0 and checksum(native.stdout),
                 f"{tag}: runs natively ({native.returncode}: {native.stdout.strip()})")
    env = shim.env(P=2, gat=shim.path(f"throttled-{tag}"), trace=shim.path(f"trace-{tag}-%p.csv"))
    with CoRunner(shim, env, 2):
        r = shim.run(args, env, timeout=60)
    check.expect(r.returncode == 0 and checksum(r.stdout) == checksum(native.stdout),
                 f"{tag}, throttled: the native answer ({r.stdout.strip()} vs {native.stdout.strip()})")
    check.expect("hand work" not in r.stderr, f"{tag}, throttled: nothing said about hand-overs ({r.stderr.strip()[:200]})")
    rows = shim.trace_rows(f"trace-{tag}-")
    return native, rows, phases_in_order(rows)


args = [prog, "60", "25", "20"]
native, rows, phases = throttled("burst", args)
check.expect(rows and "handover" not in phases, f"burst, throttled: never left unconfined as hand-over bound (phases in order {phases[:8]})")
ends = sum(row["region_ends"] for row in rows)
check.expect(ends > 100, f"burst, throttled: the region ends were counted ({ends}; the idle check's progress)")
# Serial code, then marks (cdo: 1.4 s of set-up, then tiny regions): the confined window begins at
# its first mark. Counted from the start of confinement instead, the set-up's CPU time diluted it,
# and the probe that met the first chunks read about 100x: held unconfined, said on stderr.
_, rows_s, phases_s = throttled("serial", [prog, "60", "0", "20", "400", "600"])
check.expect(rows_s and "probe" in phases_s and "handover" not in phases_s,
             f"serial, then chunks, throttled: probed and kept confined (phases in order {phases_s[:8]})")
# The other modes: alone, and with APSHIM_P above the cores.
for tag, extra in (("alone", {}), ("P=8", {"P": 8})):
    m = shim.run(args, shim.env(gat=shim.path(f"gat-{tag}"), **extra), timeout=60)
    check.expect(m.returncode == 0 and checksum(m.stdout) == checksum(native.stdout),
                 f"{tag}: the native answer ({m.stdout.strip()})")
check.done()
