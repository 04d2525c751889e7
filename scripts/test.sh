#!/usr/bin/env bash
# Installs dependencies, builds apshim, and runs every test: sanitizer builds (ASan+UBSan and
# TSan) of the unit tests and of libapshim.so under the integration tests, then the full suite
# (unit + integration on real TBB/OpenMP programs).
# This is what CI runs (.ci/run). Works from a clean clone as root on Debian 12.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
stage() { echo "== $* ($((SECONDS / 60)) min $((SECONDS % 60)) s into the run)"; }  # CI's budget: 30 min
./scripts/install-deps.sh
# The version matrix's other runtimes (tests/matrix), fetched while the sanitizer builds compile:
# downloads, not CPU (13 s here with pip's cache warm, more on a fresh machine).
mkdir -p build
./scripts/fetch-runtimes.sh build/runtimes > build-fetch-runtimes.log 2>&1 &
fetching=$!

# Integration tests against a sanitized libapshim.so preloaded (with its runtime first) into the
# uninstrumented test programs; which tests and why: tests/README-sanitizers.md.
#   not under either: cli.status_and_gc (`apshim run` puts the shim first in LD_PRELOAD, ahead of
#     the sanitizer runtime); tbb.converge, tbb.corun, tbb.refinalize (need APSHIM_P above the
#     cores for TBB, which the shim cannot fake behind the sanitizer's sched_getaffinity interceptor);
#     shim.clean_stack (the sanitizer runtime, loaded first, also runs before main and writes there)
#   not under TSan: tbb.no_leak* (they count every thread: TSan adds one); shim.bad_options_and_tables
#     (bad options and damaged tables, each a start that refuses or degrades: memory questions,
#     which ASan asks; under TSan it took 101 of the integration run's 630 s)
#   not under either: cost.* (instruction counts under valgrind, meaningless with a sanitizer),
#     matrix.* (other runtime builds swapped in with LD_LIBRARY_PATH: a question about them, not
#     about the shim's memory or thread safety, which the other tests cover), label real
#     (tests/real: python, gm, flexbar are hosts we did not build; LSan reports python's own leaks
#     at exit, and their CPU-use checks and 3 more minutes each run belong to the full suite)
#   not under ASan: omp.clang.plugin and omp.clang.copies (their hosts link ASan, and
#     LeakSanitizer's exit-time tracer dies of SIGSEGV in a process that dlopen()ed libomp:
#     natively too, without the shim); omp.*.tasks and mixed.*.one_allotment (throughput-bound
#     runs of tasks parked and teams forked from several threads at once: questions of thread
#     safety, which TSan asks; under ASan they took 91 s of CI's 30-minute budget);
#     fault.campaign_short (under ASan it runs without its fork modes, so TSan's run covers it);
#     omp.*.turns, omp.clang.blocktime, omp.gcc.hwloc (a thread parked or not while a teammate
#     spins for its turn, libomp's blocktime set by the controller while the team waits, the
#     program's own bindings read from its threads while the controller confines them: questions
#     of thread safety, which TSan asks; 35 s under ASan)
#   not under TSan: omp.*.lend, tbb.lend and omp.gcc.copies (lending's table updates and two
#     libgomp copies side by side: memory questions, which ASan asks); shim.stopped_lock_holder (a
#     stopped lock holder read from the lock's word and its row without the lock: memory
#     questions; 15 s alone); shim.check_without_answers (the same stopped holder, and the
#     confinement check's windows timed on the controller's thread while its updates wait: that
#     thread's logic, unit-tested under both (confine_check, controller); 13 s under TSan);
#     shim.windows_end_early (the controller's peeks at the process's CPU time between its cycles:
#     its own thread again, the same cycle code every throttled test runs; 6 s);
#     shim.confine_impossible (a seccomp filter or no /proc: starts that degrade, memory
#     questions; 20 s under TSan)
#   not under either: shim.stopped_corunner (a stopped co-runner's row read as away and DP without
#     it: the table's logic, which the unit tests ask under both sanitizers; 15 s a run);
#     shim.cpuset_change (a cpuset changed under a confined job: which CPUs the controller maps to
#     and what P it counts, code of the controller's thread that every throttled test runs from
#     its start, reset_thread_mask; 19 s a run)
#   gcc's under TSan only: omp.*.{own_dynamic,whole_team,spinning_team} (what the controller
#     decides: the same code for both runtimes, its logic pure and unit-tested under both
#     sanitizers (width_check, controller); each runtime's hooks run under both sanitizers in the
#     other tests; gcc's under TSan for the controller's team caps and spinning-team counts, which
#     the program's threads read; about 35 s), and clang's spinning_team under TSan too (its
#     sections regions are the only code that runs libomp's kmp_sections_begin; 5 s);
#     omp.*.{outside_load,width,phases} under neither
#     (the width check's narrowing: controller-thread logic and confinement, which every throttled
#     test runs under both; 32 s under TSan)
#   mixed.clang.one_allotment not under TSan (gcc's stays: both adapters' hooks in one process,
#     the question TSan asks; libomp's hooks run under TSan in omp.clang.*; 19 s)
#     omp.*.{sweeps,handover} one runtime's under each, gcc's under ASan and clang's under TSan
#     (whose programs' flushes libomp's hook turns into yields: a question of thread safety;
#     about 20 s under TSan); omp.*.contract the same way (OpenMP's promises alone, throttled
#     and above the cores: each runtime's fork and team-size hooks run under both sanitizers in
#     omp.*.kinds and yield; 25 s), and omp.gcc.enforce_taskred under TSan only (its task
#     reductions, GOMP_parallel_reductions' hook, run under ASan in omp.gcc.contract; 9 s);
#     omp.*.eigen the same way (the .symtab reader, adapters/common/elf_symtab.cpp, runs in both
#     runtimes' fork hooks alike; 4 s each);
#     omp.*.{corun,kinds_corun} the same way too (two jobs in one table, DP's split read from the
#     table and the teams: the table's code is the same for both runtimes, each runtime's team
#     hooks run under both in kinds and yield; 14 s); omp.*.bind the same way (a binding read from
#     the environment, the same code in every process whatever its runtime, and each runtime's
#     bound team held by parking: the hold's code runs under both in bind_tasks; 33 s)
#   not under either: omp.clang.runtime, taskloop and waits (libomp's runtime loops go through
#     the dispatch hooks, its taskloop tasks and waits through the OMPT callbacks, that
#     omp.clang.kinds and turns run; gcc's stay for libgomp's runtime-loop, taskloop and
#     wait hooks; 25 s); omp.gcc.taskloop and omp.gcc.waits under TSan only (a trampoline table
#     and frames pushed from the program's threads: questions of thread safety; 8 s under ASan)
#   omp.clang.kmp_roots not under ASan (threads of the shim's own, started and joined from the
#     controller's cycle while libomp's team shares CPUs: questions of thread safety; 8 s)
#   omp.clang.tasks not under TSan (libomp's task callbacks run under TSan in omp.clang.kinds'
#     fib, yield and inline; barrier parking beside tasks is the adapters' shared code, which
#     omp.gcc.tasks runs there; 18 s)
#   not under either: omp.*.measure, omp.*.enforce and tbb.measure (what the job's CPU time reads,
#     in the shim's counters and in /proc, which a sanitizer's slowdown distorts; the code they
#     run, timed hooks and one long region confined, runs in the throttled tests that stay,
#     omp.*.contract with the same program; about 60 s per sanitizer); omp.*.many_threads (CPU
#     seconds of a team of 1000, which a sanitizer's slowdown and per-thread state distort; its
#     parking and confinement code runs in the tests that stay); omp.gcc.bind_shared_cpu (the CPU a
#     bound job uses beside a hog; its parking code runs in omp.gcc.bind_tasks under both);
#     omp.gcc.mpi (mpirun's ranks: CPU seconds again, and the hooks every libgomp test runs; what
#     is its own, mpirun handing the preload to its ranks, is no memory or thread-safety question)
SAN_DECIDES='(own_dynamic|outside_load|whole_team|width|phases|spinning_team)'
SAN_DECIDES_CLANG_TSAN='(own_dynamic|outside_load|whole_team|width|phases)'
SAN_WIDTH='(outside_load|width|phases)'
SAN_ONE_RUNTIME_EACH='(sweeps|handover|contract|corun|kinds_corun|eigen|bind)'
SAN_EXCLUDE_address='^(cost\..*|matrix\..*|omp\..*\.'"$SAN_DECIDES"'|omp\.clang\.'"$SAN_ONE_RUNTIME_EACH"'|omp\.clang\.plugin|omp\.clang\.copies|omp\.clang\.(runtime|taskloop|waits)|omp\.gcc\.(taskloop|waits|enforce_taskred)|omp\..*\.(tasks|measure|enforce|many_threads|turns)|omp\.clang\.(blocktime|kmp_roots)|omp\.gcc\.hwloc|mixed\..*\.one_allotment|fault\.campaign_short|cli\.status_and_gc|shim\.clean_stack|shim\.stopped_corunner|shim\.cpuset_change|tbb\.measure|tbb\.converge|tbb\.corun|tbb\.refinalize|omp\.gcc\.bind_shared_cpu|omp\.gcc\.mpi)$'
SAN_EXCLUDE_thread='^(cost\..*|matrix\..*|omp\.clang\.(runtime|taskloop|waits|tasks)|omp\.clang\.'"$SAN_DECIDES_CLANG_TSAN"'|omp\.gcc\.'"$SAN_WIDTH"'|mixed\.clang\.one_allotment|omp\.gcc\.'"$SAN_ONE_RUNTIME_EACH"'|omp\..*\.(measure|enforce|lend|many_threads)|omp\.gcc\.copies|cli\.status_and_gc|shim\.clean_stack|shim\.bad_options_and_tables|shim\.stopped_lock_holder|shim\.check_without_answers|shim\.windows_end_early|shim\.stopped_corunner|shim\.cpuset_change|shim\.confine_impossible|tbb\.measure|tbb\.lend|tbb\.converge|tbb\.corun|tbb\.refinalize|tbb\.no_leak.*|omp\.gcc\.bind_shared_cpu|omp\.gcc\.mpi)$'
SAN_LOGS="$PWD/build-sanitizer-reports"
# The native answers of the test programs (stdout, stderr, exit 0), kept for this whole run: a
# later run of the same program with the same arguments and environment, in a later stage or the
# same test, reuses the answer instead of running again (tests/support/apshim_test.py,
# Shim.native; never a run whose time or CPU use a test reads). The three builds compile the test
# programs with the same commands.
export TEST_NATIVE_ANSWERS="$PWD/build-native-answers"
rm -rf "$TEST_NATIVE_ANSWERS"
# A compiler cache for the three builds: the test programs stand for uninstrumented hosts and are
# built with the same commands in each (cmake/Sanitizers.cmake), so they compile once. It lives in
# this folder, so that a clean clone starts cold, as CI does.
export CCACHE_DIR="$PWD/build-ccache" CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
# With it, every build's debug information as line tables only (APSHIM_DEBUG_LINES, CMakeLists.txt:
# backtraces and sanitizer reports keep their files and lines): a fifth to two fifths less compile
# time. The same arguments for the three builds and the Python package's (CMAKE_ARGS below), so
# that the cache serves a command compiled once to all of them.
CACHE=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DAPSHIM_DEBUG_LINES=ON)
# The compilers by the names pip's build of the Python package uses too (Python's own CC and CXX):
# the cache tells g++ from c++, CMake's default name.
export CC=gcc CXX=g++
# TSan sleeps 1 s (atexit_sleep_ms=1000) before every exit of a process with more than one thread,
# so that threads still running race with the exit handlers; the tests start hundreds of such
# processes. 20 ms is still 4 of the shim's 5 ms cycles for its controller thread to run into
# the exit; a thread's access before the exit handlers' TSan reports at their access, however long
# the sleep (tests/README-sanitizers.md).
TSAN_EXIT_SLEEP=atexit_sleep_ms=20

# The three builds. Only the first has the machine to itself: each next one compiles at idle
# priority (SCHED_IDLE: it runs only when no test wants the CPU) while the stage before it tests,
# since the sanitizer stages' tests, one at a time, leave about a fifth of the 2 CPUs idle. Their
# checks do not read the machine's load (those that do run in the full suite only, which no build
# overlaps); the TSan stage took 300 s beside the plain build compiling and 309 s alone.
configure() {  # configure DIR [CMAKE ARGS...]
  cmake -S . -B "$1" -G Ninja "${@:2}" "${CACHE[@]}" > "$1.log"
}
configure build-address -DAPSHIM_SANITIZE=address+undefined -DAPSHIM_BENCH=OFF -UCMAKE_CXX_FLAGS -UCMAKE_EXE_LINKER_FLAGS
configure build-thread -DAPSHIM_SANITIZE=thread -DAPSHIM_BENCH=OFF -UCMAKE_CXX_FLAGS -UCMAKE_EXE_LINKER_FLAGS
configure build
idle=(chrt --idle 0)
"${idle[@]}" true 2> /dev/null || idle=(nice -n 19)
build_failed() {  # build_failed LOG: the failed build's log in CI's output, then stop
  tail -50 "$1"; echo "the build above failed"; exit 1
}
stage "build under -fsanitize=address"
cmake --build build-address -j "$JOBS" >> build-address.log 2>&1 || build_failed build-address.log
"${idle[@]}" cmake --build build-thread -j "$JOBS" >> build-thread.log 2>&1 &
thread_build=$!
(while kill -0 "$thread_build" 2> /dev/null; do sleep 1; done
 "${idle[@]}" cmake --build build -j "$JOBS" > build-full.log 2>&1) &
full_build=$!
trap 'kill "$thread_build" "$full_build" 2> /dev/null || true' EXIT

for san in address thread; do
  [ "$san" = thread ] && { stage "build under -fsanitize=thread (compiled meanwhile)"; wait "$thread_build" || build_failed build-thread.log; }
  stage "unit tests under -fsanitize=$san"
  TSAN_OPTIONS="suppressions=$PWD/tests/tsan.supp halt_on_error=1 $TSAN_EXIT_SLEEP" UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ctest --test-dir "build-$san" -L unit -j "$JOBS" --output-on-failure

  stage "integration tests, libapshim.so under -fsanitize=$san"
  rm -rf "$SAN_LOGS" && mkdir -p "$SAN_LOGS"
  case $san in address) runtime=$(gcc -print-file-name=libasan.so) ;; thread) runtime=$(gcc -print-file-name=libtsan.so) ;; esac
  exclude_var=SAN_EXCLUDE_$san
  # Every report goes to a file (log_path) as well as failing its program, so one from a process
  # whose exit status a test does not check (a forked child, a co-runner) still fails CI below.
  TEST_PRELOAD_FIRST="$runtime" \
  ASAN_OPTIONS="detect_leaks=1:malloc_context_size=2:log_path=$SAN_LOGS/asan" \
  LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp:print_suppressions=0" \
  UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:log_path=$SAN_LOGS/ubsan" \
  TSAN_OPTIONS="suppressions=$PWD/tests/tsan.supp die_after_fork=0 $TSAN_EXIT_SLEEP log_path=$SAN_LOGS/tsan" \
    ctest --test-dir "build-$san" -LE '^(unit|real)$' -E "${!exclude_var}" -j "$JOBS" --output-on-failure
  if grep -l -E "ERROR: (Address|Leak)Sanitizer|WARNING: ThreadSanitizer|runtime error:" "$SAN_LOGS"/* 2>/dev/null; then
    echo "sanitizer reports above (from processes the tests did not fail on):"
    grep -h -A30 -E "ERROR: (Address|Leak)Sanitizer|WARNING: ThreadSanitizer|runtime error:" "$SAN_LOGS"/* | head -200
    exit 1
  fi
done

stage "full suite: build (compiled meanwhile)"
wait "$full_build" || build_failed build-full.log
cat build-full.log
wait "$fetching"  # its status, as when it ran here
cat build-fetch-runtimes.log
stage "packages (Debian package and Python package, installed fresh and used)"
CMAKE_ARGS="${CACHE[*]}" ./scripts/test-packages.sh build
stage "full suite: tests"
ctest --test-dir build -j "$JOBS" --output-on-failure
stage "done"
