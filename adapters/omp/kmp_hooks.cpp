// LLVM libomp (clang -fopenmp programs), inside the program's threads: the entry points the
// compiler calls through the PLT, interposed (research/libomp-hooks.md: measured to work).
//  - __kmpc_push_num_threads: remember the program's num_threads clause (an upper bound);
//  - __kmpc_fork_call: an asm trampoline pushes the team size the allotment allows for an
//    outermost region, then jumps to the real entry point with the variadic arguments as the
//    compiler laid them out (registers and stack untouched);
//  - __kmpc_dispatch_next_*: a thread beyond the allotment parks before its next dynamic or
//    guided chunk (parking.hpp); a fetch that finds the loop done releases the parked. Not
//    inside a doacross loop (__kmpc_doacross_init .. _fini): libomp's nonmonotonic dynamic
//    schedule (static_steal) gives each thread its own range up front, so a parked thread can
//    hold the very iteration its teammates wait for (LLVM's kmp_doacross_check hung; tests/peer).
// Measuring is the OMPT tool's job (ompt_hooks.cpp). No locks, no allocation, no logging here.
#include <dlfcn.h>

#include <cstdint>

#include "adapters/omp/next_fn.hpp"
#include "adapters/omp/omp_state.hpp"
#include "adapters/omp/parking.hpp"

namespace apshim::omp_adapter {
namespace {

using kmp_int32 = std::int32_t;
struct ident_t;
using PushNumThreads = void (*)(ident_t*, kmp_int32, kmp_int32);
using GlobalThreadNum = kmp_int32 (*)(ident_t*);
using IntFn = int (*)();

struct Real {
    void* fork_call = nullptr;
    PushNumThreads push_num_threads = nullptr;
    GlobalThreadNum global_thread_num = nullptr;
    IntFn get_level = nullptr;
    IntFn thread_num = nullptr;
};

// Resolved through the library that defines __kmpc_fork_call, so omp_* come from libomp even
// when libgomp is loaded too.
const Real& real() noexcept {
    static Real r = [] {
        Real x;
        x.fork_call = dlsym(RTLD_NEXT, "__kmpc_fork_call");
        auto sym = [&](const char* name) {
            void* s = symbol_beside(x.fork_call, name);
            return s ? s : dlsym(RTLD_NEXT, name);
        };
        x.push_num_threads = reinterpret_cast<PushNumThreads>(sym("__kmpc_push_num_threads"));
        x.global_thread_num = reinterpret_cast<GlobalThreadNum>(sym("__kmpc_global_thread_num"));
        x.get_level = reinterpret_cast<IntFn>(sym("omp_get_level"));
        x.thread_num = reinterpret_cast<IntFn>(sym("omp_get_thread_num"));
        return x;
    }();
    return r;
}

// Looked up while the library loads when the program links libomp (next_fn.hpp says why), else
// at the first fork, which comes before any team thread exists.
[[maybe_unused]] const bool g_real_at_load = dlsym(RTLD_NEXT, "__kmpc_fork_call") != nullptr && real().fork_call;

using DoacrossInit = void (*)(ident_t*, kmp_int32, kmp_int32, const void*);
using DoacrossFini = void (*)(ident_t*, kmp_int32);
NextFn<DoacrossInit> next_doacross_init{"__kmpc_doacross_init"};
NextFn<DoacrossFini> next_doacross_fini{"__kmpc_doacross_fini"};

__attribute__((tls_model("initial-exec"))) thread_local kmp_int32 t_clause = 0;
// Doacross loops this thread is inside (__kmpc_doacross_init seen, _fini not yet).
__attribute__((tls_model("initial-exec"))) thread_local int t_doacross = 0;

}  // namespace
}  // namespace apshim::omp_adapter

using namespace apshim::omp_adapter;

extern "C" __attribute__((visibility("default"))) void __kmpc_push_num_threads(ident_t* loc, kmp_int32 gtid,
                                                                               kmp_int32 n) {
    t_clause = n;                           // the program's bound for its next region
    real().push_num_threads(loc, gtid, n);  // and its own effect, for nested regions
}

// Called by the trampoline below with __kmpc_fork_call's first argument; returns the real
// __kmpc_fork_call for the trampoline to jump to.
extern "C" __attribute__((visibility("hidden"))) void* apshim_kmp_before_fork(ident_t* loc) noexcept {
    const Real& r = real();
    kmp_int32 clause = t_clause;
    t_clause = 0;
    if (apshim::shim_enabled() && r.get_level && r.get_level() == 0) {
        int n, reserved = 0;
        if (g_kmp_state.sees_region_ends.load(std::memory_order_relaxed)) {
            n = reserve_team(g_kmp_state, clause, reserved);
            kmp_outermost_fork(reserved);
        } else {
            n = team_size(g_kmp_state, clause);
        }
        if (n > 0 && n != clause) r.push_num_threads(loc, r.global_thread_num(loc), n);
        note_fork(g_kmp_state, n > 0 ? n : clause);
    }
    return r.fork_call;
}

#if defined(__x86_64__)
// void __kmpc_fork_call(ident_t* loc, kmp_int32 argc, kmpc_micro fn, ...): the outlined
// function's arguments follow, three in registers and the rest on the caller's stack. C++
// cannot forward them, so the trampoline saves the argument registers (and %al, the vector
// register count of a variadic call), calls the hook with the stack 16-byte aligned (7 pushes
// over the return address), restores them and tail-jumps: the real entry point sees exactly
// the call the program made.
asm(R"(
    .text
    .globl  __kmpc_fork_call
    .type   __kmpc_fork_call, @function
    .p2align 4
__kmpc_fork_call:
    .cfi_startproc
    pushq   %rdi
    .cfi_adjust_cfa_offset 8
    pushq   %rsi
    .cfi_adjust_cfa_offset 8
    pushq   %rdx
    .cfi_adjust_cfa_offset 8
    pushq   %rcx
    .cfi_adjust_cfa_offset 8
    pushq   %r8
    .cfi_adjust_cfa_offset 8
    pushq   %r9
    .cfi_adjust_cfa_offset 8
    pushq   %rax
    .cfi_adjust_cfa_offset 8
    call    apshim_kmp_before_fork@PLT
    movq    %rax, %r11
    popq    %rax
    .cfi_adjust_cfa_offset -8
    popq    %r9
    .cfi_adjust_cfa_offset -8
    popq    %r8
    .cfi_adjust_cfa_offset -8
    popq    %rcx
    .cfi_adjust_cfa_offset -8
    popq    %rdx
    .cfi_adjust_cfa_offset -8
    popq    %rsi
    .cfi_adjust_cfa_offset -8
    popq    %rdi
    .cfi_adjust_cfa_offset -8
    jmpq    *%r11
    .cfi_endproc
    .size   __kmpc_fork_call, .-__kmpc_fork_call
)");
#endif

extern "C" __attribute__((visibility("default"))) void __kmpc_doacross_init(ident_t* loc, kmp_int32 gtid,
                                                                          kmp_int32 num_dims, const void* dims) {
    DoacrossInit fn = next_doacross_init.get();
    ++t_doacross;
    if (fn) fn(loc, gtid, num_dims, dims);
}

extern "C" __attribute__((visibility("default"))) void __kmpc_doacross_fini(ident_t* loc, kmp_int32 gtid) {
    DoacrossFini fn = next_doacross_fini.get();
    if (t_doacross > 0) --t_doacross;
    if (fn) fn(loc, gtid);
}

#define APSHIM_KMP_DISPATCH_NEXT(suffix, T)                                                                   \
    namespace {                                                                                               \
    NextFn<int (*)(ident_t*, kmp_int32, kmp_int32*, T*, T*, T*)> next_dispatch_##suffix{                     \
        "__kmpc_dispatch_next_" #suffix};                                                                     \
    }                                                                                                         \
    extern "C" __attribute__((visibility("default"))) int __kmpc_dispatch_next_##suffix(                     \
        ident_t* loc, kmp_int32 gtid, kmp_int32* p_last, T* p_lb, T* p_ub, T* p_st) {                         \
        auto fn = next_dispatch_##suffix.get();                                                               \
        const Real& r = real();                                                                               \
        bool on = apshim::shim_enabled() && r.thread_num && r.get_level;                                     \
        if (on && t_doacross == 0)                                                                            \
            park_if_surplus(g_kmp_state, kmp_thread_state(), r.thread_num(), r.get_level());                  \
        int more = fn(loc, gtid, p_last, p_lb, p_ub, p_st);                                                   \
        if (on && !more) loop_exhausted(g_kmp_state);                                                         \
        return more;                                                                                          \
    }
APSHIM_KMP_DISPATCH_NEXT(4, kmp_int32)
APSHIM_KMP_DISPATCH_NEXT(4u, std::uint32_t)
APSHIM_KMP_DISPATCH_NEXT(8, std::int64_t)
APSHIM_KMP_DISPATCH_NEXT(8u, std::uint64_t)
