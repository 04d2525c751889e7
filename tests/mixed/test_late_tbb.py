"""oneTBB loaded (dlopen, RTLD_LOCAL) and first used after an OpenMP runtime started the shim, and
the other way round: tests/tbb/tbb_plugin_host runs each plugin in turn, then exits. The shim's
exit hook must stop its controller before the later runtime's static destructors run. It was
registered once, at the first runtime's start, so it ran after libtbb's (registered as libtbb was
loaded, later): destroying the shim's global_control then called into libtbb's destroyed state,
"pure virtual method called", and the program aborted at exit (rc 134, its buffered output
lost). Seen in R: libR starts libgomp, RcppParallel loads libtbb later (Debian's r-bioc-dada2;
docs/enforcement.md, eighty-eighth session).
In every mode (in_each_mode), each order and each OpenMP runtime: rc 0, the native output, and no
C++ runtime complaint on stderr.
Usage: test_late_tbb.py BUILD HOST TBB_PLUGIN OMP_PLUGIN..."""
import os
import sys

from apshim_test import Check, Shim, in_each_mode, sanitizer_preloaded

if sanitizer_preloaded("asan"):
    # LeakSanitizer's tracer crashes at exit where libomp's and oneTBB's threads share the process,
    # without the shim too (SIGSEGV in the tracer, rc 1), as in mixed.late_libomp: leaks are
    # checked elsewhere.
    os.environ["ASAN_OPTIONS"] = os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0"

build, host, tbb_plugin, omp_plugins = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
shim = Shim(build)
check = Check("mixed.late_tbb")
ROUNDS, ITEMS, ITEM_US = "3", "500", "40"  # about 20 ms of work a round on 2 threads

for omp_plugin in omp_plugins:
    for plugins in ([omp_plugin, tbb_plugin], [tbb_plugin, omp_plugin]):
        argv = [host, ",".join(plugins), ROUNDS, ITEMS, ITEM_US]
        order = " then ".join("oneTBB" if p == tbb_plugin else p.rsplit("/", 1)[-1] for p in plugins)
        native = shim.native(argv, timeout=60)
        if not check.expect(native.returncode == 0 and "sum=" in native.stdout,
                            f"{order}: runs without the shim (rc {native.returncode}: {native.stderr.strip()})"):
            continue

        def run(label, env):
            r = shim.run(argv, env, timeout=60)
            complaint = next((line for line in r.stderr.splitlines()
                              if "pure virtual" in line or "terminate called" in line), None)
            check.expect(r.returncode == 0 and r.stdout == native.stdout and complaint is None,
                         f"{order}, {label}: rc {r.returncode}, {r.stdout.strip() or 'no output'}"
                         f"{', ' + complaint if complaint else ''} (native: {native.stdout.strip()})")

        in_each_mode(shim, run)
check.done()
