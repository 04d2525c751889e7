"""A thread created by a thread that confinement does not hold is confined at the next cycle.

Since the seventy-second session confinement lists /proc/self/task only where a thread may be new
or off the job's mask: the mask changed, a thread was created through pthread_create since the
last listing (the shim's interposer counts them), or at the periodic scan (every 20 cycles), which
also reads back the masks of the threads it already confined. Listing every cycle had cost a third
of the controller's CPU. A thread created by a confined thread inherits its mask; one created by
a thread the shim left unconfined (its controller, which creates oneTBB's workers when their cap
rises) would run on every CPU until the next listing.

tests/programs/late_thread (libgomp, two threads computing) runs beside a stand-in co-runner that
holds the rest of a P = 2 table (allotment 1, confined at once: APSHIM_CONFINE_CHECK=0, and no
width or idle probes to move the masks). Its helper thread H, once confined, sets its own mask back
to every CPU with a raw system call no interposer sees, creates a thread T, and reads both real
masks every 200 us. Checked, over 7 trials: T is confined before H (whose unseen change only the
scan finds) in at least 4. Counted at the scan alone, T never comes first (H's lower thread id is
set first in the same listing), so the test fails without the count; with it, only a scan that
falls on T's first cycle (1 in 20) makes a trial come out otherwise. Also: the program ends and its
two computing threads both ran.
"""
import re
import sys

from apshim_test import Check, CoRunner, Shim, require_two_cpus

require_two_cpus("a CPU outside the job's confinement")
build, prog = sys.argv[1], sys.argv[2]
shim = Shim(build)
check = Check("shim.late_thread")
TRIALS = 7
env = shim.env(P=2, APSHIM_CONFINE_CHECK=0, APSHIM_WIDTH_CHECK=0, APSHIM_IDLE_CHECK=0, APSHIM_USE_IDLE=0)
with CoRunner(shim, {k: v for k, v in env.items() if k != "LD_PRELOAD"}, P=2):
    run = shim.run([prog, str(TRIALS)], env, timeout=60)
out = run.stdout
print(out.strip())
check.expect(run.returncode == 0 and "threads that computed: 2" in out,
             f"the program ends, both computing threads ran (exit {run.returncode}: {run.stderr.strip()[-300:]})")
check.expect("never confined" not in out, "the job was confined at allotment 1")
m = re.search(r"T first in (\d+) of (\d+)", out)
check.expect(m is not None and int(m.group(2)) == TRIALS and int(m.group(1)) >= 4,
             f"a thread created outside the confinement is confined before the scan, in at least 4 of {TRIALS} trials "
             f"({m.group(0) if m else 'no summary line'})")
check.done()
