"""Systems where the shim cannot confine threads, so that it must say so once and enforce the
allotment by parking only:
- a seccomp filter on sched_setaffinity, as a systemd unit's SystemCallFilter=~@resources (or
  @system-service without @resources) and some sandboxes install. The filter may answer EPERM or
  kill the process (SIGSYS, systemd's default action). Until the fortieth session the shim's
  confinement ignored EPERM (the allotment silently unenforced, the oneTBB job at 1.9 CPUs at
  allotment 1), and with a filter that kills, the controller's start killed the host program;
- no /proc (a container or chroot without it): the process's threads cannot be listed. Until the
  fortieth session the shim confined nothing and said nothing (2 CPUs at allotment 1).

Each of a real libgomp program (tests/omp/omp_work, dynamic loops) and a real oneTBB program
(tests/tbb/tbb_rounds) runs in each such system (tests/programs/no_setaffinity for the filters;
a private mount namespace with /proc unmounted, where this test may make one), natively, alone
and throttled (a stand-in co-runner holds the rest of a P = 2 table: allotment 1). Checked: the
native answer, exit 0, the shim's warning exactly once (and never natively), and at allotment 1
at most 1.3 CPUs: the allotment is then enforced by parking at the runtimes' safe points, which
these dynamic loops and parallel_for tasks have."""
import subprocess
import sys

from apshim_test import Check, CoRunner, Shim, checksum, run_measured, sanitizer_preloaded

build, launcher, omp_prog, tbb_prog = sys.argv[1:5]
shim = Shim(build)
check = Check("shim.confine_impossible")

# The program alone is preloaded: unshare, sh and umount are not ours to run under the shim (nor
# under a sanitizer's runtime, whose leak check would judge umount).
NO_PROC = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
           'umount -l /proc && export LD_PRELOAD="$PRELOAD_AFTER" && exec "$@"', "sh"]


def no_proc_env(env):
    env = dict(env)
    env["PRELOAD_AFTER"] = env.pop("LD_PRELOAD", "")
    return env


systems = {}  # name: (the command line's prefix, what the shim's warning says)
probe = subprocess.run([launcher, "errno", sys.executable, "-c", "import os; os.sched_setaffinity(0, os.sched_getaffinity(0))"],
                       capture_output=True, text=True)
if probe.returncode == 126 or "PermissionError" not in probe.stderr:
    print(f"not checked: the seccomp filter cannot be installed or does not apply here "
          f"({probe.returncode}: {probe.stderr.strip()[-200:]})")
else:
    systems["a filter answering EPERM"] = ([launcher, "errno"], "set CPU affinity", dict)
    systems["a filter that kills"] = ([launcher, "kill"], "set CPU affinity", dict)
probe = subprocess.run(NO_PROC + ["test", "!", "-e", "/proc/self"], capture_output=True, text=True)
if sanitizer_preloaded("asan"):
    print("not checked: no /proc under ASan (LeakSanitizer's exit-time check reads /proc/self/maps: a fatal error "
          "without it, natively too)")
elif probe.returncode != 0:
    print(f"not checked: no /proc: a mount namespace without it needs root ({probe.stderr.strip()[-200:]})")
else:
    systems["no /proc"] = (NO_PROC, "threads cannot be listed", no_proc_env)
if not systems:
    print("SKIP: neither system can be made here")
    sys.exit(77)

programs = {
    "libgomp": [omp_prog, "imbalanced", "16", "56"],  # 16 regions of 56 items of 40*(i+1) us: about 1 s on one CPU
    "oneTBB": [tbb_prog, "16", "200", "300"],  # 16 rounds of 200 items of 300 us: about 1 s on one CPU
}


def said(err):
    """The shim's lines on stderr (the programs write one line per region or round there)."""
    return "\n".join(line for line in err.splitlines() if line.startswith("apshim"))


for system, (prefix, WARNING, env_for) in systems.items():
    for name, argv in programs.items():
        what = f"{name}, {system}"
        native = run_measured(prefix + argv, env_for(shim.env(preload=False)), timeout=60)
        check.expect(native.returncode == 0 and checksum(native.stdout) and WARNING not in native.stderr,
                     f"{what}: runs natively ({native.describe()}: {native.stdout.strip()}; {said(native.stderr)})")
        env = shim.env(P=2)
        alone = run_measured(prefix + argv, env_for(env), timeout=60)
        check.expect(alone.returncode == 0 and checksum(alone.stdout) == checksum(native.stdout),
                     f"{what}, alone: the native answer ({alone.describe()}: {alone.stdout.strip()}; {said(alone.stderr)})")
        check.expect(alone.stderr.count(WARNING) == 1, f"{what}, alone: the shim says once why it does not confine "
                     f"({said(alone.stderr)!r})")
        with CoRunner(shim, env, 2):
            held = run_measured(prefix + argv, env_for(env), timeout=60)
        check.expect(held.returncode == 0 and checksum(held.stdout) == checksum(native.stdout),
                     f"{what}, throttled: the native answer ({held.describe()}: {held.stdout.strip()}; {said(held.stderr)})")
        check.expect(held.stderr.count(WARNING) == 1, f"{what}, throttled: the warning once ({said(held.stderr)!r})")
        check.expect(held.cpus() <= 1.3, f"{what}, throttled: at most 1.3 CPUs at allotment 1, by parking ({held.describe()})")
check.done()
