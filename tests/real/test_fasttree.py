"""FastTree (Debian's fasttree 2.1, its OpenMP build `fasttreeMP` on libgomp): a tree from a
deterministic 400 x 1000 nucleotide alignment (inputs.write_alignment), about 5 s natively on 2
cores. Its phases of short regions come between serial stretches of a second and more (one thread
in FastTree's own code, no region at all). The tree it prints must be the native one alone,
throttled to allotment 1 by a co-runner, and at APSHIM_P=8 (realprog.py).

Alone, the width check must not narrow it: FastTree needs both CPUs (5.6 s on one thread). Until
the eighty-seventh session a width probe just after the serial stretch read 10-13x "faster on
half" against a reference that was mostly that stretch, a second look confirmed it in about half
the runs, and the job was held on one CPU for a second (18% of its cycles), 12% slower than
natively (shim/probe_window.hpp: a serial stretch ends the window). Two alone runs: each must
spend under a tenth of its cycles narrowed. With the fix none of 18 alone runs was narrowed at all
(by hand and in this test); the library before narrowed 8 runs of 17, each for 18% of its cycles,
and failed this test 3 times in 3."""
from realprog import RealProgram, build_dir, require, trace_rows
import inputs

FASTTREE = "/usr/bin/fasttreeMP"
ALONE_RUNS = 2
MAX_NARROWED = 0.10  # of an alone run's trace rows

t = None


def argv(tag):
    return [FASTTREE, "-nt", "-quiet", t.shim.path("alignment.fa")]


def output_of(tag, m):
    return m.stdout if m.returncode == 0 and m.stdout.strip().endswith(";") else None


t = RealProgram("real.fasttree", build_dir(), argv, output_of)
require(t.check, FASTTREE)
inputs.write_alignment(t.shim.path("alignment.fa"), 400, 1000)
t.native()
for run in range(ALONE_RUNS):
    tag = f"alone {run + 1}"
    if t.alone(tag).returncode != 0:
        continue
    rows = trace_rows(t.shim.path(f"trace-alone-{run + 1}.%p"))
    narrowed = sum(1 for r in rows if r.get("width_check") == "narrowed")
    t.check.expect(rows and narrowed <= MAX_NARROWED * len(rows),
                   f"{tag}: the width check kept it on both CPUs ({narrowed} of {len(rows)} cycles narrowed; "
                   f"at most {MAX_NARROWED:.0%})")
t.throttled()
t.p8()
t.done()
