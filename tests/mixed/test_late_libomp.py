"""A libomp loaded and first used after libgomp's regions started the shim's controller
(tests/mixed/late_libomp.c): libomp reads its CPU mask at its middle initialisation, by libc's
syscall(), and sizes every default team from it. Throttled, the process is confined by then, and
before the shim answered that call as it answers sched_getaffinity (shim/cpu_hooks.cpp), libomp
saw one CPU: omp_get_max_threads() 1 and default teams of one for the rest of the run, whatever
the allotment later.
In every mode (in_each_mode), the same answer as natively; throttled and confined, the kernel ran
the process on fewer CPUs before the plugin was loaded (else the run proves nothing).
Usage: test_late_libomp.py BUILD LATE_LIBOMP PLUGIN"""
import os
import sys

from apshim_test import Check, Shim, in_each_mode, require_two_cpus, run_measured, sanitizer_preloaded, stdout_words

if sanitizer_preloaded("asan"):
    # LeakSanitizer's tracer crashes at this program's exit without the shim too (SIGSEGV in the
    # tracer, rc 1; libgomp's and libomp's threads in one process): leaks are checked elsewhere.
    os.environ["ASAN_OPTIONS"] = os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0"

build, prog, plugin = sys.argv[1], sys.argv[2], sys.argv[3]
shim = Shim(build)
check = Check("mixed.late_libomp")
require_two_cpus("throttled, the process must be confined to fewer CPUs than it started with")
args = [prog, plugin, "1.5"]  # 1.5 s of libgomp regions first: throttled, confined after about 0.2 s


def words_of(run):
    """The program's key=value words, {} where it failed."""
    return stdout_words(run.stdout) if run.returncode == 0 and "libomp_max=" in run.stdout else {}


def sizes(words):
    """What must be as natively: all but whether the process was confined."""
    return {k: v for k, v in words.items() if k != "confined_before_load"}


native = shim.native(args, timeout=60)
print(f"native: {native.stdout.strip()}", flush=True)
if not check.expect(bool(words_of(native)), f"native run ({native.returncode}: {native.stderr.strip()})"):
    check.done()  # nothing to compare with
want = sizes(words_of(native))


def run(label, env):
    m = run_measured(args, env, timeout=60)
    words = words_of(m)
    check.expect(not m.timed_out and sizes(words) == want, f"{label}: {m.stdout.strip()} ({m.describe()}): the native sizes {want}")
    if label == "throttled":
        check.expect(words.get("confined_before_load") == "1", f"{label}: the process was confined before the plugin was loaded")


in_each_mode(shim, run)
check.done()
