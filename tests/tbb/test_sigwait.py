"""A program that blocks SIGCHLD and SIGALRM in its threads and collects them with sigtimedwait
gets every one of them under the shim: the shim's controller thread never has a signal
unblocked (it took them, and oneTBB's own test_tbb_fork hung; tests/peer/RESULTS.md)."""
import sys

from apshim_test import Check, Shim

build, prog = sys.argv[1], sys.argv[2]
shim = Shim(build)
check = Check("tbb.sigwait")
native = shim.native([prog, "10"], timeout=60)
check.expect(native.returncode == 0, f"natively every signal arrives ({native.stderr.strip()})")
r = shim.run([prog, "10"], shim.env(P=4), timeout=60)
check.expect(r.returncode == 0 and r.stdout == native.stdout,
             f"under the shim every signal arrives, same answer (rc {r.returncode}: {r.stderr.strip()})")
check.done()
