// GCC libgomp (gcc -fopenmp binaries on their own runtime), inside the program's threads.
// libgomp has no OMPT; GCC 12 starts every parallel region through GOMP_parallel(fn, data,
// num_threads, flags), so interposing it both caps the team (num_threads = 0 means "default")
// and lets a wrapper time each thread's share of the region.
// Not covered: the GOMP 1.0 pair GOMP_parallel_start/end (old compilers), combined
// GOMP_parallel_loop_* entry points (team capped at the next plain GOMP_parallel), parking
// inside long dynamic loops (throttled at the next fork only).
#include <dlfcn.h>

#include "adapters/omp/region_runtime.hpp"

namespace apshim::omp_adapter {

State g_gomp_state;
RegionRuntime g_gomp("libgomp", g_gomp_state);

namespace {

using Fn = void (*)(void*);
using GompParallel = void (*)(Fn, void*, unsigned, unsigned);
using GetLevel = int (*)();

struct Real {
    GompParallel parallel = nullptr;
    GetLevel get_level = nullptr;
};

const Real& real() noexcept {
    static Real r = [] {
        Real x;
        x.parallel = reinterpret_cast<GompParallel>(dlsym(RTLD_NEXT, "GOMP_parallel"));
        x.get_level = reinterpret_cast<GetLevel>(symbol_beside(reinterpret_cast<void*>(x.parallel), "omp_get_level"));
        return x;
    }();
    return r;
}

__attribute__((tls_model("initial-exec"))) thread_local ThreadTiming t_timing;

struct Region {
    Fn fn;
    void* data;
};

void run_region(void* p) {
    auto* r = static_cast<Region*>(p);
    region_enter(g_gomp_state, t_timing);
    r->fn(r->data);
    region_leave(t_timing);
}

}  // namespace
}  // namespace apshim::omp_adapter

using namespace apshim::omp_adapter;

extern "C" __attribute__((visibility("default"))) void GOMP_parallel(void (*fn)(void*), void* data, unsigned num_threads,
                                                                     unsigned flags) {
    const Real& r = real();
    if (!apshim::shim_enabled()) return r.parallel(fn, data, num_threads, flags);
    if (!r.get_level || r.get_level() == 0) {
        if (!g_gomp_state.seen.load(std::memory_order_relaxed) && !g_gomp_state.seen.exchange(true))
            apshim::runtime_started(g_gomp);
        int n = team_size(g_gomp_state, static_cast<int>(num_threads));
        if (n > 0) num_threads = static_cast<unsigned>(n);
    }
    Region region{fn, data};
    r.parallel(&run_region, &region, num_threads, flags);
}
