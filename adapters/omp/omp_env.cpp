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

#include "adapters/common/next_fn.hpp"
#include "adapters/omp/omp_adapter.hpp"

namespace apshim::omp_adapter {

std::atomic<bool> g_program_wants_exact{false};

namespace {

__attribute__((constructor(110))) void omp_setup() {
    if (!host().enabled()) return;
    // Threads time-sharing a confined job's CPUs, threads left out of a region, and idle ones
    // must give their core back quickly: libomp spins 200 ms by default (research: 98% of a core
    // wasted with 50 ms gaps), libgomp 300 000 spins. libgomp's own short count for
    // oversubscription (100) never applies under confinement (it compares its threads with the
    // CPUs of the mask it started with), so the count matters: at allotment 1 NPB SP.W (gcc) took
    // 3.74 s with 10 000 spins, 2.02 s with 1000, 1.90 s with one thread; alone 1.14 / 1.01 s
    // (bench/results/2026-11-24-peer-pairs-dev2core/spincount).
    bool user_wait = host().env_chosen_by_user("OMP_WAIT_POLICY");
    if (!user_wait) host().env_default("KMP_BLOCKTIME", "1");
    if (!user_wait) host().env_default("GOMP_SPINCOUNT", "1000");
    if (const char* d = std::getenv("OMP_DYNAMIC"); d && strcasecmp(d, "false") == 0) g_program_wants_exact.store(true);
}

NextFn<void (*)(int)> next_omp_set_dynamic{"omp_set_dynamic"};
APSHIM_RESOLVE_AT_LOAD(next_omp_set_dynamic)

}  // namespace

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
