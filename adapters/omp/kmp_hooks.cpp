// LLVM libomp (clang -fopenmp binaries), inside the program's threads. Interposes the entry
// points the compiler calls through the PLT (research/libomp-hooks.md: measured to work):
//  - __kmpc_push_num_threads: remember the program's num_threads clause (an upper bound);
//  - __kmpc_fork_call: push the team size the allotment allows for outermost regions, and run
//    the outlined function through a wrapper that times each thread's share of the region.
// No locks, no allocation, no logging here.
#include <dlfcn.h>

#include <cstdarg>
#include <cstdint>

#include "adapters/omp/invoke_outlined.hpp"
#include "adapters/omp/loop_parking.hpp"
#include "adapters/omp/region_runtime.hpp"

namespace apshim::omp_adapter {

State g_kmp_state;
RegionRuntime g_kmp("libomp", g_kmp_state);

namespace {

using kmp_int32 = std::int32_t;
struct ident_t;
using ForkCall = void (*)(ident_t*, kmp_int32, void*, ...);
using PushNumThreads = void (*)(ident_t*, kmp_int32, kmp_int32);
using GlobalThreadNum = kmp_int32 (*)(ident_t*);
using GetLevel = int (*)();
using ThreadNum = int (*)();

struct Real {
    ForkCall fork_call = nullptr;
    PushNumThreads push_num_threads = nullptr;
    GlobalThreadNum global_thread_num = nullptr;
    GetLevel get_level = nullptr;
    ThreadNum thread_num = nullptr;
};

// Resolved through the library that defines __kmpc_fork_call, so omp_* come from libomp even
// when libgomp is loaded too (research: RTLD_NEXT could pick the wrong runtime's omp_get_level).
const Real& real() noexcept {
    static Real r = [] {
        Real x;
        x.fork_call = reinterpret_cast<ForkCall>(dlsym(RTLD_NEXT, "__kmpc_fork_call"));
        auto sym = [&](const char* name) {
            void* s = symbol_beside(reinterpret_cast<void*>(x.fork_call), name);
            return s ? s : dlsym(RTLD_NEXT, name);
        };
        x.push_num_threads = reinterpret_cast<PushNumThreads>(sym("__kmpc_push_num_threads"));
        x.global_thread_num = reinterpret_cast<GlobalThreadNum>(sym("__kmpc_global_thread_num"));
        x.get_level = reinterpret_cast<GetLevel>(sym("omp_get_level"));
        x.thread_num = reinterpret_cast<ThreadNum>(sym("omp_get_thread_num"));
        return x;
    }();
    return r;
}

__attribute__((tls_model("initial-exec"))) thread_local ThreadTiming t_timing;
__attribute__((tls_model("initial-exec"))) thread_local kmp_int32 t_clause = 0;

struct Outlined {
    void* fn;
    int argc;
    void** args;
    bool timed;
};

void run_outlined(kmp_int32* gtid, kmp_int32* btid, Outlined* o) {
    if (o->timed) region_enter(g_kmp_state, t_timing);
    invoke_outlined(o->fn, gtid, btid, o->argc, o->args);
    if (o->timed) region_leave(t_timing);
}

}  // namespace
}  // namespace apshim::omp_adapter

using namespace apshim::omp_adapter;

extern "C" __attribute__((visibility("default"))) void __kmpc_push_num_threads(ident_t* loc, kmp_int32 gtid,
                                                                               kmp_int32 n) {
    t_clause = n;                            // the program's bound for its next region
    real().push_num_threads(loc, gtid, n);   // and its own effect, for anything else that reads it
}

extern "C" __attribute__((visibility("default"))) void __kmpc_fork_call(ident_t* loc, kmp_int32 argc, void* fn, ...) {
    const Real& r = real();
    void* args[kMaxForwardedArgs];
    if (argc < 0 || argc > kMaxForwardedArgs) {
        // Beyond what the wrapper can forward: hand the original arguments on unchanged,
        // unmeasured and unthrottled (GCC's __builtin_apply copies the caller's frame).
        __builtin_return(__builtin_apply(reinterpret_cast<void (*)(...)>(r.fork_call), __builtin_apply_args(),
                                         static_cast<std::size_t>(argc) * sizeof(void*) + 64));
    }
    va_list ap;
    va_start(ap, fn);
    for (int i = 0; i < argc; ++i) args[i] = va_arg(ap, void*);
    va_end(ap);
    kmp_int32 clause = t_clause;
    t_clause = 0;
    bool enabled = apshim::shim_enabled();
    if (enabled && r.get_level && r.get_level() == 0) {
        if (!g_kmp_state.seen.load(std::memory_order_relaxed) && !g_kmp_state.seen.exchange(true))
            apshim::runtime_started(g_kmp);
        int n = team_size(g_kmp_state, clause);
        if (n > 0 && n != clause) r.push_num_threads(loc, r.global_thread_num(loc), n);
    }
    Outlined o{fn, argc, args, enabled};
    r.fork_call(loc, 1, reinterpret_cast<void*>(&run_outlined), &o);
}

// Dynamic and guided loops fetch chunks here: a thread beyond the allotment parks before its
// next fetch (loop_parking.hpp); a fetch that finds the loop exhausted releases the parked.
#define APSHIM_KMP_DISPATCH_NEXT(suffix, T)                                                                   \
    extern "C" __attribute__((visibility("default"))) int __kmpc_dispatch_next_##suffix(                     \
        ident_t* loc, kmp_int32 gtid, kmp_int32* p_last, T* p_lb, T* p_ub, T* p_st) {                         \
        using Fn = int (*)(ident_t*, kmp_int32, kmp_int32*, T*, T*, T*);                                      \
        static Fn fn = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "__kmpc_dispatch_next_" #suffix));              \
        const Real& r = real();                                                                               \
        bool on = apshim::shim_enabled() && r.thread_num && r.get_level;                                     \
        if (on) park_before_chunk(g_kmp_state, r.thread_num(), r.get_level());                                \
        int more = fn(loc, gtid, p_last, p_lb, p_ub, p_st);                                                   \
        if (on && !more) loop_exhausted(g_kmp_state);                                                         \
        return more;                                                                                          \
    }
APSHIM_KMP_DISPATCH_NEXT(4, kmp_int32)
APSHIM_KMP_DISPATCH_NEXT(4u, std::uint32_t)
APSHIM_KMP_DISPATCH_NEXT(8, std::int64_t)
APSHIM_KMP_DISPATCH_NEXT(8u, std::uint64_t)
