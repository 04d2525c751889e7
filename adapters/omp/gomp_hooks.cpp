// GCC libgomp (gcc -fopenmp binaries on their own runtime), inside the program's threads.
// libgomp has no OMPT; GCC 12 starts every parallel region through GOMP_parallel(fn, data,
// num_threads, flags), so interposing it both caps the team (num_threads = 0 means "default")
// and lets a wrapper time each thread's share of the region.
// Dynamic and guided loops fetch chunks through GOMP_loop_*_next: a thread beyond the allotment
// parks there (loop_parking.hpp). Not covered: the GOMP 1.0 pair GOMP_parallel_start/end (old
// compilers), the ull combined forms, the *_start calls (each thread's first chunk).
#include <dlfcn.h>

#include "adapters/omp/loop_parking.hpp"
#include "adapters/omp/region_runtime.hpp"

namespace apshim::omp_adapter {

State g_gomp_state;
RegionRuntime g_gomp("libgomp", g_gomp_state);

namespace {

using Fn = void (*)(void*);
using GompParallel = void (*)(Fn, void*, unsigned, unsigned);
using GetLevel = int (*)();
using ThreadNum = int (*)();

struct Real {
    GompParallel parallel = nullptr;
    GetLevel get_level = nullptr;
    ThreadNum thread_num = nullptr;
};

const Real& real() noexcept {
    static Real r = [] {
        Real x;
        x.parallel = reinterpret_cast<GompParallel>(dlsym(RTLD_NEXT, "GOMP_parallel"));
        x.get_level = reinterpret_cast<GetLevel>(symbol_beside(reinterpret_cast<void*>(x.parallel), "omp_get_level"));
        x.thread_num = reinterpret_cast<ThreadNum>(symbol_beside(reinterpret_cast<void*>(x.parallel), "omp_get_thread_num"));
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

// The team for a region about to start: capped by the allotment when outermost.
unsigned outermost_team(unsigned num_threads) {
    const Real& r = real();
    if (r.get_level && r.get_level() != 0) return num_threads;
    if (!g_gomp_state.seen.load(std::memory_order_relaxed) && !g_gomp_state.seen.exchange(true))
        apshim::runtime_started(g_gomp);
    int n = team_size(g_gomp_state, static_cast<int>(num_threads));
    return n > 0 ? static_cast<unsigned>(n) : num_threads;
}

}  // namespace
}  // namespace apshim::omp_adapter

using namespace apshim::omp_adapter;

extern "C" __attribute__((visibility("default"))) void GOMP_parallel(void (*fn)(void*), void* data, unsigned num_threads,
                                                                     unsigned flags) {
    const Real& r = real();
    if (!apshim::shim_enabled()) return r.parallel(fn, data, num_threads, flags);
    Region region{fn, data};
    r.parallel(&run_region, &region, outermost_team(num_threads), flags);
}

#define APSHIM_GOMP_LOOP_NEXT(name, T)                                                                  \
    extern "C" __attribute__((visibility("default"))) bool name(T* istart, T* iend) {                  \
        using Fn = bool (*)(T*, T*);                                                                    \
        static Fn fn = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, #name));                                   \
        const Real& r = real();                                                                         \
        bool on = apshim::shim_enabled() && r.thread_num && r.get_level;                               \
        if (on) park_before_chunk(g_gomp_state, r.thread_num(), r.get_level());                         \
        bool more = fn(istart, iend);                                                                   \
        if (on && !more) loop_exhausted(g_gomp_state);                                                  \
        return more;                                                                                    \
    }
APSHIM_GOMP_LOOP_NEXT(GOMP_loop_dynamic_next, long)
APSHIM_GOMP_LOOP_NEXT(GOMP_loop_guided_next, long)
APSHIM_GOMP_LOOP_NEXT(GOMP_loop_nonmonotonic_dynamic_next, long)
APSHIM_GOMP_LOOP_NEXT(GOMP_loop_nonmonotonic_guided_next, long)
APSHIM_GOMP_LOOP_NEXT(GOMP_loop_ull_dynamic_next, unsigned long long)
APSHIM_GOMP_LOOP_NEXT(GOMP_loop_ull_guided_next, unsigned long long)
APSHIM_GOMP_LOOP_NEXT(GOMP_loop_ull_nonmonotonic_dynamic_next, unsigned long long)
APSHIM_GOMP_LOOP_NEXT(GOMP_loop_ull_nonmonotonic_guided_next, unsigned long long)

// `parallel for` with a schedule is one combined call in GCC (GOMP 4.0): same treatment as
// GOMP_parallel (team capped, each thread's share timed), the loop bounds passed through.
#define APSHIM_GOMP_PARALLEL_LOOP(name)                                                                   \
    extern "C" __attribute__((visibility("default"))) void name(void (*fn)(void*), void* data, unsigned n, \
                                                                long start, long end, long incr, long chunk, \
                                                                unsigned flags) {                        \
        using F = void (*)(void (*)(void*), void*, unsigned, long, long, long, long, unsigned);          \
        static F real_fn = reinterpret_cast<F>(dlsym(RTLD_NEXT, #name));                                 \
        if (!apshim::shim_enabled()) return real_fn(fn, data, n, start, end, incr, chunk, flags);         \
        Region region{fn, data};                                                                          \
        real_fn(&run_region, &region, outermost_team(n), start, end, incr, chunk, flags);                 \
    }
#define APSHIM_GOMP_PARALLEL_LOOP_RUNTIME(name)                                                           \
    extern "C" __attribute__((visibility("default"))) void name(void (*fn)(void*), void* data, unsigned n, \
                                                                long start, long end, long incr,         \
                                                                unsigned flags) {                        \
        using F = void (*)(void (*)(void*), void*, unsigned, long, long, long, unsigned);                \
        static F real_fn = reinterpret_cast<F>(dlsym(RTLD_NEXT, #name));                                 \
        if (!apshim::shim_enabled()) return real_fn(fn, data, n, start, end, incr, flags);                \
        Region region{fn, data};                                                                          \
        real_fn(&run_region, &region, outermost_team(n), start, end, incr, flags);                        \
    }
APSHIM_GOMP_PARALLEL_LOOP(GOMP_parallel_loop_static)
APSHIM_GOMP_PARALLEL_LOOP(GOMP_parallel_loop_dynamic)
APSHIM_GOMP_PARALLEL_LOOP(GOMP_parallel_loop_guided)
APSHIM_GOMP_PARALLEL_LOOP(GOMP_parallel_loop_nonmonotonic_dynamic)
APSHIM_GOMP_PARALLEL_LOOP(GOMP_parallel_loop_nonmonotonic_guided)
APSHIM_GOMP_PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_runtime)
APSHIM_GOMP_PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_nonmonotonic_runtime)
APSHIM_GOMP_PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_maybe_nonmonotonic_runtime)
