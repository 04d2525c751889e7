// Before main: short spin-waits for both OpenMP runtimes, fork handling, and the program's own
// thread-count setting (an upper bound the shim keeps) and dynamic-adjustment setting.
#include <dlfcn.h>
#include <pthread.h>

#include <strings.h>

#include <atomic>
#include <cstdlib>

#include "adapters/omp/next_fn.hpp"
#include "adapters/omp/omp_adapter.hpp"

namespace apshim::omp_adapter {

std::atomic<int> g_user_threads{0};  // omp_set_num_threads / OMP_NUM_THREADS, 0 = none
// The program's dynamic-adjustment setting: -1 none (the runtimes' default, off), 0 it turned
// dynamic adjustment off itself, 1 it turned it on (omp_set_dynamic, OMP_DYNAMIC).
std::atomic<int> g_dynamic{-1};

namespace {

void fork_child() {
    g_kmp.after_fork_child();
    g_gomp.after_fork_child();
}

__attribute__((constructor(110))) void omp_setup() {
    if (!shim_enabled()) return;
    // Threads left out of a smaller team, and idle ones, must give their core back quickly:
    // libomp spins 200 ms by default (research: 98% of a core wasted with 50 ms gaps).
    bool user_wait = std::getenv("OMP_WAIT_POLICY") != nullptr;
    if (!user_wait && !std::getenv("KMP_BLOCKTIME")) setenv("KMP_BLOCKTIME", "1", 0);
    if (!user_wait && !std::getenv("GOMP_SPINCOUNT")) setenv("GOMP_SPINCOUNT", "10000", 0);
    if (const char* n = std::getenv("OMP_NUM_THREADS")) g_user_threads.store(std::atoi(n));  // "4,2": 4
    if (const char* d = std::getenv("OMP_DYNAMIC")) {
        if (strcasecmp(d, "false") == 0) g_dynamic.store(0);
        if (strcasecmp(d, "true") == 0) g_dynamic.store(1);
    }
    pthread_atfork(nullptr, nullptr, &fork_child);
}

}  // namespace

int user_thread_setting() noexcept { return g_user_threads.load(std::memory_order_relaxed); }

bool exact_teams() noexcept { return g_dynamic.load(std::memory_order_relaxed) == 0; }

bool dynamic_allowed() noexcept { return g_dynamic.load(std::memory_order_relaxed) == 1; }

}  // namespace apshim::omp_adapter

// The program's omp_set_num_threads is its bound for later regions; remember it, then let the
// runtime (whichever defines it after us) apply it.
namespace {
apshim::omp_adapter::NextFn<void (*)(int)> next_omp_set_num_threads{"omp_set_num_threads"};
apshim::omp_adapter::NextFn<void (*)(int)> next_omp_set_dynamic{"omp_set_dynamic"};
}  // namespace

extern "C" __attribute__((visibility("default"))) void omp_set_num_threads(int n) {
    auto real = next_omp_set_num_threads.get();
    if (n > 0) apshim::omp_adapter::g_user_threads.store(n, std::memory_order_relaxed);
    if (real) real(n);
}

// omp_set_dynamic(0) (or OMP_DYNAMIC=false) is the program saying that it relies on getting the
// team sizes it asks for (OpenMP: with dyn-var false a region gets exactly the requested number
// of threads); the shim then stops sizing teams at forks and only parks threads inside regions
// (LLVM's runtime tests omp_in_parallel, omp_barrier, kmp_task_modifier_*: tests/peer/RESULTS.md).
extern "C" __attribute__((visibility("default"))) void omp_set_dynamic(int dynamic) {
    auto real = next_omp_set_dynamic.get();
    apshim::omp_adapter::g_dynamic.store(dynamic != 0 ? 1 : 0, std::memory_order_relaxed);
    if (real) real(dynamic);
}
