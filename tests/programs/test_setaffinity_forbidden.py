"""A system that forbids setting CPU affinity: a seccomp filter on sched_setaffinity, as a systemd
unit's SystemCallFilter=~@resources (or @system-service without @resources) and some sandboxes
install. The filter may answer EPERM or kill the process (SIGSYS, systemd's default action). Until
the fortieth session the shim's confinement ignored EPERM (the allotment silently unenforced, the
oneTBB job at 1.9 CPUs at allotment 1) and, with a filter that kills, the first confinement would
have killed the host program.

Each of a real libgomp program (tests/omp/omp_work, dynamic loops) and a real oneTBB program
(tests/tbb/tbb_rounds) runs under tests/programs/no_setaffinity with each action, natively, alone
and throttled (a stand-in co-runner holds the rest of a P = 2 table: allotment 1). Checked: the
native answer, exit 0, the shim's warning exactly once (and never natively), and at allotment 1
at most 1.3 CPUs: the allotment is then enforced by parking at the runtimes' safe points, which
these dynamic loops and parallel_for tasks have."""
import re
import subprocess
import sys

from apshim_test import Check, CoRunner, Shim, run_measured

build, launcher, omp_prog, tbb_prog = sys.argv[1:5]
shim = Shim(build)
check = Check("shim.setaffinity_forbidden")

probe = subprocess.run([launcher, "errno", sys.executable, "-c", "import os; os.sched_setaffinity(0, os.sched_getaffinity(0))"],
                       capture_output=True, text=True)
if probe.returncode == 126 or "PermissionError" not in probe.stderr:
    print(f"SKIP: the filter cannot be installed or does not apply here ({probe.returncode}: {probe.stderr.strip()[-200:]})")
    sys.exit(77)

WARNING = "set CPU affinity"
programs = {
    "libgomp": [omp_prog, "imbalanced", "24", "56"],  # 24 regions of 56 items of 40*(i+1) us: about 1.5 s on one CPU
    "oneTBB": [tbb_prog, "24", "200", "300"],  # 24 rounds of 200 items of 300 us: about 1.4 s on one CPU
}


def said(err):
    """The shim's lines on stderr (the programs write one line per region or round there)."""
    return "\n".join(line for line in err.splitlines() if line.startswith("apshim"))


def checksum(out):
    m = re.search(r"checksum=(\S+)", out or "")
    return m.group(1) if m else None


for action in ("errno", "kill"):
    for name, argv in programs.items():
        what = f"{name}, filter '{action}'"
        native = run_measured([launcher, action] + argv, shim.env(preload=False), timeout=60)
        check.expect(native.returncode == 0 and checksum(native.stdout) and WARNING not in native.stderr,
                     f"{what}: runs natively ({native.describe()}: {native.stdout.strip()}; {said(native.stderr)})")
        env = shim.env(P=2)
        alone = run_measured([launcher, action] + argv, env, timeout=60)
        check.expect(alone.returncode == 0 and checksum(alone.stdout) == checksum(native.stdout),
                     f"{what}, alone: the native answer ({alone.describe()}: {alone.stdout.strip()}; {said(alone.stderr)})")
        check.expect(alone.stderr.count(WARNING) == 1, f"{what}, alone: the shim says once why it does not confine "
                     f"({said(alone.stderr)!r})")
        with CoRunner(shim, env, 2):
            held = run_measured([launcher, action] + argv, env, timeout=60)
        check.expect(held.returncode == 0 and checksum(held.stdout) == checksum(native.stdout),
                     f"{what}, throttled: the native answer ({held.describe()}: {held.stdout.strip()}; {said(held.stderr)})")
        check.expect(held.stderr.count(WARNING) == 1, f"{what}, throttled: the warning once ({said(held.stderr)!r})")
        check.expect(held.cpus() <= 1.3, f"{what}, throttled: at most 1.3 CPUs at allotment 1, by parking ({held.describe()})")
check.done()
