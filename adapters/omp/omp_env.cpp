// Before main: short spin-waits for both OpenMP runtimes.
//
// The program's thread-count and dynamic-adjustment settings are not tracked here: they are
// per-thread ICVs (OpenMP: each thread's data environment has its own nthreads-var and dyn-var),
// so the fork hooks ask the runtime on the forking thread (omp_get_max_threads, omp_get_dynamic).
// Only one fact is process-wide, and only in the safe direction: the program turned dynamic
// adjustment off explicitly somewhere (omp_set_dynamic(0), OMP_DYNAMIC=false), which overrides
// the user's APSHIM_SHRINK_TEAMS=1 (LLVM's runtime tests that spin for every teammate do this).
#include <strings.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "adapters/common/env_value.hpp"
#include "adapters/common/next_fn.hpp"
#include "adapters/omp/gomp_spin.hpp"
#include "adapters/omp/omp_adapter.hpp"

namespace apshim::omp_adapter {

std::atomic<bool> g_program_wants_exact{false};

namespace {

// The shim's spin-wait defaults, unless the user chose a wait policy or the value (omp_setup).
struct SpinDefault {
    const char* name;
    const char* value;
};
constexpr SpinDefault kSpinDefaults[] = {{"KMP_BLOCKTIME", "1"}, {"GOMP_SPINCOUNT", "1000"}};

// The shim's default for `name`, or null when it sets none.
const char* spin_default(const char* name) noexcept {
    for (const SpinDefault& d : kSpinDefaults)
        if (std::strcmp(name, d.name) == 0) return d.value;
    return nullptr;
}

// Set once omp_setup() ran: from then on the environment itself holds the defaults.
std::atomic<bool> g_defaults_in_environ{false};
// shim_kmp_blocktime(), decided once by omp_setup(): read at every outermost fork, where scanning
// the environment would cost more than a short region.
std::atomic<int> g_shim_kmp_blocktime{-1};
// kmp_threads_capped_by_user(), decided once by omp_setup().
std::atomic<bool> g_kmp_threads_capped{false};

const char* from_environ(const char* name) noexcept { return env_value(environ, name); }

// Before the shim's constructor: would it run (APSHIM_DISABLE not on, shim/options.cpp's words)?
bool disabled_by_environ() noexcept {
    const char* v = from_environ("APSHIM_DISABLE");
    if (!v) return false;
    for (const char* on : {"1", "true", "yes", "on"})
        if (strcasecmp(v, on) == 0) return true;
    return false;
}

__attribute__((constructor(110))) void omp_setup() {
    // Threads time-sharing a confined job's CPUs, threads left out of a region, and idle ones
    // must give their core back quickly: libomp spins 200 ms by default (research: 98% of a core
    // wasted with 50 ms gaps), libgomp 300 000 spins. libgomp's own short count for
    // oversubscription (100) never applies under confinement (it compares its threads with the
    // CPUs of the mask it started with), so the count matters: at allotment 1 NPB SP.W (gcc) took
    // 3.74 s with 10 000 spins, 2.02 s with 1000, 1.90 s with one thread; alone 1.14 / 1.01 s
    // (bench/results/2026-11-24-peer-pairs-dev2core/spincount). While confinement has the job's
    // threads share CPUs, gomp_spin.cpp lowers libgomp's count further, to 0, in its memory. A
    // libgomp that the program links read its environment before this runs: getenv (below) gave
    // it these values then.
    struct Done {
        ~Done() { g_defaults_in_environ.store(true); }
    } done;
    if (!host().enabled()) return;
    g_kmp_threads_capped.store(host().env_chosen_by_user("KMP_DEVICE_THREAD_LIMIT") || host().env_chosen_by_user("KMP_ALL_THREADS"));
    bool user_wait = host().env_chosen_by_user("OMP_WAIT_POLICY");
    if (!user_wait)
        for (const SpinDefault& d : kSpinDefaults) host().env_default(d.name, d.value);
    if (!user_wait && !host().env_chosen_by_user("KMP_BLOCKTIME"))
        g_shim_kmp_blocktime.store(std::atoi(spin_default("KMP_BLOCKTIME")));
    // libomp in its default "throughput" mode calls sched_yield after every task it runs from a
    // barrier or taskwait. Two threads of a team confined to one CPU then hand the CPU to each
    // other after every task: BOTS sort (untied tasks, which the shim cannot run at once) at
    // allotment 1 made 131 000 context switches and took 1.22-1.31 s against 0.84-1.01 s with one
    // thread. "turnaround" drops that yield only (it is the `__kmp_library == library_throughput`
    // condition of that one KMP_YIELD); KMP_USE_YIELD=1 keeps libomp's default yielding in its spin
    // loops, which turnaround would otherwise limit to oversubscription as libomp sees it (it does
    // not see confinement). Measured at allotment 1: sort 0.99-1.04 s and 271 switches; NPB SP.W and
    // LU.W (barriers, no tasks) unchanged. The two go together or not at all: KMP_LIBRARY is
    // OMP_WAIT_POLICY's rival in libomp, and a user who chose either chose libomp's waiting.
    // Where confinement can never hold the job (the user binds threads, APSHIM_CONFINE=0), no two
    // threads share a CPU for it, and that yield is where parking holds a task program's threads
    // (parking.hpp: wait_in_barrier): libomp's default stays. Also where a libomp that a plugin
    // loads later will bind its threads (libomp_binding_asked): confinement then stops.
    if (!user_wait && !host().env_chosen_by_user("KMP_LIBRARY") && !host().env_chosen_by_user("KMP_USE_YIELD") &&
        host().confinement_possible() && !host().libomp_binding_asked()) {
        host().env_default("KMP_LIBRARY", "turnaround");
        host().env_default("KMP_USE_YIELD", "1");
    }
    // Spinning the user asked for would read as work on the threads' CPU clocks: keep timing.
    const char* policy = std::getenv("OMP_WAIT_POLICY");
    bool user_spins = (user_wait && !(policy && strcasecmp(policy, "passive") == 0)) ||
                      host().env_chosen_by_user("KMP_BLOCKTIME") || host().env_chosen_by_user("GOMP_SPINCOUNT");
    if (user_spins) {
        g_kmp_state.always_timed.store(true);
        g_gomp_state.always_timed.store(true);
        g_kmp_state.timing.store(true);
        g_gomp_state.timing.store(true);
    }
    if (const char* d = std::getenv("OMP_DYNAMIC"); d && strcasecmp(d, "false") == 0) g_program_wants_exact.store(true);
}

NextFn<void (*)(int)> next_omp_set_dynamic{"omp_set_dynamic"};
APSHIM_RESOLVE_AT_LOAD(next_omp_set_dynamic)

}  // namespace

unsigned long long shim_gomp_spin_count() noexcept {
    if (!host().enabled() || host().env_chosen_by_user("OMP_WAIT_POLICY") || host().env_chosen_by_user("GOMP_SPINCOUNT"))
        return 0;
    return std::strtoull(spin_default("GOMP_SPINCOUNT"), nullptr, 10);
}

int shim_kmp_blocktime() noexcept { return g_shim_kmp_blocktime.load(std::memory_order_relaxed); }

bool kmp_threads_capped_by_user() noexcept { return g_kmp_threads_capped.load(std::memory_order_relaxed); }

bool shrink_allowed_by_user() noexcept {
    return host().shrink_teams_opted_in() && !g_program_wants_exact.load(std::memory_order_relaxed);
}

}  // namespace apshim::omp_adapter

// Passed through to the runtime (whichever defines it after us); only remembered when it asks
// for exact teams.
extern "C" __attribute__((visibility("default"))) void omp_set_dynamic(int dynamic) {
    using namespace apshim::omp_adapter;
    if (dynamic == 0) g_program_wants_exact.store(true, std::memory_order_relaxed);
    if (auto real = next_omp_set_dynamic.get()) real(dynamic);
}

// getenv, interposed for one reason: libgomp linked by the program reads GOMP_SPINCOUNT in its
// own constructor, which the loader runs before a preloaded library's, so the default that
// omp_setup() puts into the environment came too late for it (it spun its 300 000 rounds: LLVM's
// omp_for_collapse, gcc, ordered handoffs between two threads on one CPU, ran over 120 s at
// allotment 1 against 0.3 s with 1000). Until omp_setup() ran, an unset spin variable reads as
// the shim's default, under the same conditions (the shim not disabled, no OMP_WAIT_POLICY);
// every other name, and every name afterwards, is the environment's, as libc's getenv answers.
// The program's own getenv (bash defines one) still wins over this one.
extern "C" __attribute__((visibility("default"))) char* getenv(const char* name) {
    using namespace apshim::omp_adapter;
    if (const char* v = from_environ(name)) return const_cast<char*>(v);
    if (g_defaults_in_environ.load(std::memory_order_acquire)) return nullptr;
    if (const char* d = spin_default(name))
        return from_environ("OMP_WAIT_POLICY") || disabled_by_environ() ? nullptr : const_cast<char*>(d);
    return nullptr;
}
