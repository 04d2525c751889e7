"""A program that raises TBB's max_allowed_parallelism above the cores and needs those threads
(tasks waiting for each other) finishes under the shim: the shim steps aside instead of capping."""
import sys

from apshim_test import Check, Shim

build, prog = sys.argv[1], sys.argv[2]
shim = Shim(build)
check = Check("tbb.needs_threads")
for attempt in range(3):
    r = shim.run([prog], shim.env(P=2, gat=shim.path(f"gat{attempt}")), timeout=30)
    check.expect(r.returncode == 0 and r.stdout.strip() == "all 4 met", f"run {attempt}: finishes ({r.stdout.strip()})")
check.done()
