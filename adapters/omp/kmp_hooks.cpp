// LLVM libomp (clang -fopenmp programs), inside the program's threads: the entry points the
// compiler calls through the PLT, interposed (research/libomp-hooks.md: measured to work).
//  - __kmpc_push_num_threads: remember the program's num_threads clause (an upper bound);
//  - __kmpc_fork_call: an asm trampoline pushes the team size the allotment allows for an
//    outermost region, then jumps to the real entry point with the variadic arguments as the
//    compiler laid them out (registers and stack untouched);
//  - __kmpc_dispatch_init_*: remember whether the loop now dispatched is dynamic or guided;
//  - __kmpc_dispatch_next_*: a thread beyond the allotment parks before its next dynamic or
//    guided chunk (parking.hpp); a fetch that finds the loop done releases the parked. Not in
//    a static or ordered loop dispatched chunk by chunk, not inside a doacross loop
//    (__kmpc_doacross_init .. _fini): libomp's nonmonotonic dynamic schedule (static_steal)
//    gives each thread its own range up front, so a parked thread can hold the very iteration
//    its teammates wait for (LLVM's kmp_doacross_check hung; tests/peer);
//  - __kmpc_flush: while confined, a thread spinning on flushes gives its CPU to a teammate;
//  - __kmpc_for_static_init_4 with the sections flag: a `parallel sections` region's team is
//    counted, and spins once it stays open (whole_team.hpp: begin_sections_team);
//  - __kmpc_omp_task_alloc / __kmpc_omp_task: at allotment 1, tasks made inside tasks run at once;
//  - __kmpc_ordered, and every chunk fetch: a progress mark while timed (shim/confine_check.hpp);
//  - kmp_set_blocktime(_): the program's own choice of waiting, which the shim then leaves alone
//    (at an outermost fork and at barriers, the shim sets the blocktime the team waits with:
//    follow_blocktime, follow_blocktime_at_barrier).
// Measuring is the OMPT tool's job (ompt_hooks.cpp). No locks, no allocation, no logging here.
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "adapters/common/clock.hpp"
#include "adapters/common/next_fn.hpp"
#include "adapters/omp/kmp_roots.hpp"
#include "adapters/omp/omp_state.hpp"
#include "adapters/omp/parking.hpp"
#include "adapters/omp/thread_state.hpp"
#include "adapters/omp/waiting.hpp"
#include "adapters/omp/whole_team.hpp"

namespace apshim::omp_adapter {
namespace {

using kmp_int32 = std::int32_t;
struct ident_t;
using ForkCall = void (*)(ident_t*, kmp_int32, void*, ...);
using PushNumThreads = void (*)(ident_t*, kmp_int32, kmp_int32);
using GlobalThreadNum = kmp_int32 (*)(ident_t*);
using IntFn = int (*)();

// Resolved through the library that defines __kmpc_fork_call, so omp_* come from libomp even
// when libgomp is loaded too.
// Every entry point is taken for its caller (next_fn.hpp: RuntimeCopies): with
// KMP_DUPLICATE_LIB_OK=TRUE two copies of libomp run side by side, each module on its own.
NextFn<ForkCall> next_fork_call{"__kmpc_fork_call", &g_kmp_state.copies};
NextFn<PushNumThreads> next_push_num_threads{"__kmpc_push_num_threads", &g_kmp_state.copies};
BesideFn<GlobalThreadNum, ForkCall> real_global_thread_num{next_fork_call, "__kmpc_global_thread_num"};
OmpQueries<ForkCall> kmp{next_fork_call};
APSHIM_RESOLVE_AT_LOAD(next_fork_call)
BesideFn<int (*)(), ForkCall> real_num_procs{next_fork_call, "omp_get_num_procs"};
APSHIM_RESOLVE_AT_LOAD(next_push_num_threads)
APSHIM_RESOLVE_AT_LOAD(real_global_thread_num)
APSHIM_RESOLVE_AT_LOAD(kmp)

using DoacrossInit = void (*)(ident_t*, kmp_int32, kmp_int32, const void*);
using DoacrossFini = void (*)(ident_t*, kmp_int32);
NextFn<DoacrossInit> next_doacross_init{"__kmpc_doacross_init", &g_kmp_state.copies};
NextFn<DoacrossFini> next_doacross_fini{"__kmpc_doacross_fini", &g_kmp_state.copies};
APSHIM_RESOLVE_AT_LOAD(next_doacross_init)
APSHIM_RESOLVE_AT_LOAD(next_doacross_fini)

// Off with two copies of libomp: the queries (kmp above) answer from one of them only
// (gomp_hooks.cpp: hooks_on says more).
inline bool hooks_on() noexcept { return apshim::host().enabled() && !g_kmp_state.copies.several(); }

#define APSHIM_CALLER __builtin_return_address(0)

__attribute__((tls_model("initial-exec"))) thread_local kmp_int32 t_clause = 0;
// Doacross loops this thread is inside (__kmpc_doacross_init seen, _fini not yet).
__attribute__((tls_model("initial-exec"))) thread_local int t_doacross = 0;
// The loop this thread dispatches now (its last __kmpc_dispatch_init_*) hands out chunks to
// whoever asks: dynamic or guided (static_steal: libomp's nonmonotonic dynamic, whose ranges
// teammates steal from). A static or ordered loop goes through the dispatcher too
// (`schedule(static, 1) ordered`), but each thread's chunks, and its ordered turns, are its
// own: parked before one, a thread held the turn its teammate spun for (LLVM's omp_for_ordered:
// about a second per park, 537 s in all with APSHIM_CONFINE=0; 1.1 s in its first region with
// confinement, which starts a moment after the limit falls). runtime and auto: not parked (what
// they resolve to is libomp's business; confinement enforces the allotment there).
__attribute__((tls_model("initial-exec"))) thread_local bool t_parkable_loop = false;

constexpr bool parkable_schedule(int schedule) noexcept {
    constexpr int kModifiers = (1 << 29) | (1 << 30);  // kmp_sch_modifier_{monotonic,nonmonotonic}
    switch (schedule & ~kModifiers) {
        case 35:   // kmp_sch_dynamic_chunked
        case 36:   // kmp_sch_guided_chunked
        case 42:   // kmp_sch_guided_iterative_chunked
        case 43:   // kmp_sch_guided_analytical_chunked
        case 44:   // kmp_sch_static_steal
        case 46:   // kmp_sch_guided_simd
        case 163:  // kmp_nm_dynamic_chunked
        case 164:  // kmp_nm_guided_chunked
            return true;
        default:  // static, ordered (64-71), runtime, auto, distribute, trapezoidal
            return false;
    }
}
static_assert(parkable_schedule(35 | (1 << 30)) && !parkable_schedule(65) && !parkable_schedule(67) &&
              !parkable_schedule(33) && !parkable_schedule(37));

// libomp's blocktime (how long a waiting thread spins before it sleeps) follows confinement, as
// libgomp's spin count does (gomp_spin.hpp). The shim's 1 ms (omp_env.cpp) lets a team catch the
// next of many short regions without a sleep and a wake-up; but confined to fewer CPUs than
// threads, a worker spinning at a region's end keeps the thread that would fork the next region
// from the CPU for up to that millisecond. libomp yields in that spin only when its threads
// outnumber the CPUs it saw at its start, which confinement does not change. Tiny regions
// (omp_phases, clang) throttled to allotment 1 made 19 000 a second at 1 ms, 39 000 at 0; one
// thread natively 84 000, two threads on one CPU by taskset 58 000. libomp copies a thread's
// blocktime into its team's threads when it forks, so the forking thread sets it
// (kmp_set_blocktime, a libomp extension that sets that thread's ICV) just before an outermost
// fork, only when it changes; the team's waits in that region and until the next fork follow
// it. A region already running follows at its barriers (follow_blocktime_at_barrier). Left alone
// where the user chose the waiting (KMP_BLOCKTIME, OMP_WAIT_POLICY) or the program set a blocktime
// itself: the thread that set it keeps its value, and every other thread gets the shim's default
// back at its next fork (kmp_set_blocktime sets only its caller's ICV, so a 0 the shim had set on
// another root thread would otherwise stay for good). While no other job of the table wants more
// processors and the job is not confined, libomp's own default (200 ms) instead (waiting.hpp): a
// worker that slept after 1 ms took about 0.2 ms to wake for the next region.
using SetBlocktime = void (*)(int);
// libomp's KMP_DEFAULT_BLOCKTIME (ms): Debian 12's libomp 14 on every CPU (later versions choose 0
// on hybrid CPUs).
constexpr int kLibompBlocktime = 200;

// The blocktime waiting_now() asks for; `shim_default`: the shim's.
int blocktime_wanted(int shim_default) noexcept {
    switch (waiting_now()) {
        case Waiting::none: return 0;
        case Waiting::shim: break;
        case Waiting::runtime: return kLibompBlocktime;
    }
    return shim_default;
}
BesideFn<SetBlocktime, ForkCall> real_set_blocktime{next_fork_call, "kmp_set_blocktime"};
BesideFn<IntFn, ForkCall> real_get_blocktime{next_fork_call, "kmp_get_blocktime"};
APSHIM_RESOLVE_AT_LOAD(real_set_blocktime)
APSHIM_RESOLVE_AT_LOAD(real_get_blocktime)
std::atomic<bool> g_program_set_blocktime{false};
// The blocktime this thread's ICV holds: -1 until the shim first set it (the shim's default).
__attribute__((tls_model("initial-exec"))) thread_local int t_blocktime = -1;
// This thread set its blocktime itself (kmp_set_blocktime): the shim never sets it again.
__attribute__((tls_model("initial-exec"))) thread_local bool t_program_set_blocktime = false;

void follow_blocktime() noexcept {
    int shim_default = shim_kmp_blocktime();
    if (shim_default < 0 || t_program_set_blocktime) return;
    bool program_chose = g_program_set_blocktime.load(std::memory_order_relaxed);
    int want = program_chose ? shim_default : blocktime_wanted(shim_default);
    if (want == (t_blocktime < 0 ? shim_default : t_blocktime)) return;
    if (auto set = real_set_blocktime.get()) {
        set(want);
        t_blocktime = want;
    }
}

}  // namespace

// The libomp the program forks through (none before its first fork there): the shim's roots
// register with it (kmp_roots.hpp).
KmpEntries kmp_root_entries() noexcept {
    if (!next_fork_call.get_if_known()) return {};
    return {kmp.max_threads.get(), real_num_procs.get()};
}

// libomp reads a waiting thread's blocktime at each barrier from that thread's own ICV, which the
// fork copied from the forking thread and kmp_set_blocktime on the thread itself changes for the
// rest of the region (libomp 14: __kmp_barrier copies it into th_team_bt_intervals after the
// OMPT sync_region_wait callback that calls this). So a region forked before its job was confined
// (NPB EP, CG and MG run their whole timed loop in one) follows confinement from its next barrier
// on, each thread on its own. The ICV is per region (the next fork copies the forking thread's
// again), so the value is asked of libomp rather than remembered: one call per barrier.
void follow_blocktime_at_barrier() noexcept {
    int shim_default = shim_kmp_blocktime();
    if (shim_default < 0 || g_program_set_blocktime.load(std::memory_order_relaxed)) return;
    int want = blocktime_wanted(shim_default);
    auto get = real_get_blocktime.get();
    auto set = real_set_blocktime.get();
    if (get && set && get() != want) set(want);
}

}  // namespace apshim::omp_adapter

using namespace apshim::omp_adapter;
using apshim::BesideFn;
using apshim::NextFn;

extern "C" __attribute__((visibility("default"))) void kmp_set_blocktime(int msec) {
    t_program_set_blocktime = true;
    g_program_set_blocktime.store(true, std::memory_order_relaxed);
    if (auto set = real_set_blocktime.get()) set(msec);
}

// Fortran's name for it (the argument by reference).
namespace {
BesideFn<void (*)(int*), ForkCall> real_set_blocktime_fortran{next_fork_call, "kmp_set_blocktime_"};
}  // namespace

extern "C" __attribute__((visibility("default"))) void kmp_set_blocktime_(int* msec) {
    t_program_set_blocktime = true;
    g_program_set_blocktime.store(true, std::memory_order_relaxed);
    if (auto set = real_set_blocktime_fortran.get()) set(msec);
}

extern "C" __attribute__((visibility("default"))) void __kmpc_push_num_threads(ident_t* loc, kmp_int32 gtid,
                                                                               kmp_int32 n) {
    t_clause = n;  // the program's request for its next region
    if (auto push = next_push_num_threads.for_caller(APSHIM_CALLER)) push(loc, gtid, n);
}

namespace {
[[noreturn]] void no_fork_call() { apshim::missing_entry_point("__kmpc_fork_call"); }
}  // namespace

// Called by the trampoline below with __kmpc_fork_call's first argument and its return address;
// returns the real __kmpc_fork_call (the caller's) for the trampoline to jump to.
extern "C" __attribute__((visibility("hidden"))) void* apshim_kmp_before_fork(ident_t* loc, const void* site) noexcept {
    kmp_int32 clause = t_clause;
    t_clause = 0;
    auto fork_call = next_fork_call.for_caller(site);
    if (!fork_call) return reinterpret_cast<void*>(&no_fork_call);
    if (hooks_on() && kmp.outermost()) {
        bool opted_in = shrink_allowed_by_user();
        ForkIcvs icvs = kmp.icvs(/*need_max=*/opted_in);
        const bool promised = !(icvs.dynamic || opted_in);  // before keep_whole_team withholds both
        // A library that needs whole teams (whole_team.hpp) gets them from the shim, and, where
        // the region's end is seen (ompt_hooks.cpp turns dyn-var back on there), from libomp too:
        // this thread's dyn-var is off for the region (libomp's load-balance rule gave the
        // stand-in a team of one under the shim, tests/omp/test_whole_team.py).
        bool sees_ends = g_kmp_state.sees_region_ends.load(std::memory_order_relaxed);
        int request = clause;
        const TeamNeed need = team_need(site);
        SetDynamic dynamic_back = keep_whole_team(need, g_kmp_state, request, icvs, opted_in, kmp.set_dynamic,
                                                  /*can_turn_back=*/sees_ends);
        int n, reserved = 0;
        if (sees_ends) {
            n = reserve_team(g_kmp_state, request, icvs, opted_in, reserved);
        } else {
            n = team_size(g_kmp_state, request, icvs, opted_in);
        }
        int team = n > 0 ? n : (icvs.max_threads > 0 ? icvs.max_threads : clause);
        bool spinning = begin_spinning_team(g_kmp_state, team, promised && spins_at_meetings(need), sees_ends);
        if (sees_ends) kmp_outermost_fork(reserved, dynamic_back, whole_team_asked(request, icvs, opted_in), spinning);
        auto push = next_push_num_threads.for_caller(site);
        auto gtid = real_global_thread_num.get();
        if (n > 0 && n != clause && push && gtid) push(loc, gtid(loc), n);
        note_fork(g_kmp_state, team);
        follow_blocktime();
    }
    return reinterpret_cast<void*>(fork_call);
}

#if defined(__x86_64__)
// void __kmpc_fork_call(ident_t* loc, kmp_int32 argc, kmpc_micro fn, ...): the outlined
// function's arguments follow, three in registers and the rest on the caller's stack. C++
// cannot forward them, so the trampoline saves every argument register (the six integer ones,
// %al, the vector register count of a variadic call, and xmm0-7, which a variadic call may
// carry and the C++ hook may clobber), calls the hook with the stack 16-byte aligned (7 pushes
// and 128 bytes over the return address, which it passes second, at 184(%rsp)), restores them and tail-jumps: the real entry point
// sees exactly the call the program made.
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
    subq    $128, %rsp
    .cfi_adjust_cfa_offset 128
    movdqu  %xmm0, 0(%rsp)
    movdqu  %xmm1, 16(%rsp)
    movdqu  %xmm2, 32(%rsp)
    movdqu  %xmm3, 48(%rsp)
    movdqu  %xmm4, 64(%rsp)
    movdqu  %xmm5, 80(%rsp)
    movdqu  %xmm6, 96(%rsp)
    movdqu  %xmm7, 112(%rsp)
    movq    184(%rsp), %rsi
    call    apshim_kmp_before_fork@PLT
    movq    %rax, %r11
    movdqu  0(%rsp), %xmm0
    movdqu  16(%rsp), %xmm1
    movdqu  32(%rsp), %xmm2
    movdqu  48(%rsp), %xmm3
    movdqu  64(%rsp), %xmm4
    movdqu  80(%rsp), %xmm5
    movdqu  96(%rsp), %xmm6
    movdqu  112(%rsp), %xmm7
    addq    $128, %rsp
    .cfi_adjust_cfa_offset -128
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
    DoacrossInit fn = next_doacross_init.for_caller(APSHIM_CALLER);
    ++t_doacross;
    if (fn) fn(loc, gtid, num_dims, dims);
}

extern "C" __attribute__((visibility("default"))) void __kmpc_doacross_fini(ident_t* loc, kmp_int32 gtid) {
    DoacrossFini fn = next_doacross_fini.for_caller(APSHIM_CALLER);
    if (t_doacross > 0) --t_doacross;
    if (fn) fn(loc, gtid);
}

// `#pragma omp flush` in clang builds. Programs spin on a teammate's flag with it (NPB LU's
// pipeline: `while (flag[j-1] == 0) { #pragma omp flush }`). Confined to fewer CPUs than threads,
// such a spinner kept its CPU for a whole time slice (several ms) before the teammate it waits for
// could run, once per flag: LU.S took 12-15 s against 0.1-0.17 s with one thread. While the job is
// confined, a thread flushing again at the same place (`loc`, one per flush in the source) within
// kSpinGapTicks is taken to be spinning and gives its CPU to a teammate (sched_yield, a few
// hundred ns when nobody else is runnable). Two flushes at different places are not a loop: a
// critical section or single that flushes twice (LLVM's omp_single, omp_lock) gave its CPU away
// in the middle, to a teammate that could only wait for it (omp_single throttled: 0.5 s against
// 0.0 s). Alone, or while the job owns every CPU, one atomic load. gcc inlines flush as a fence:
// nothing to hook there.
namespace {
using Flush = void (*)(ident_t*);
NextFn<Flush> next_flush{"__kmpc_flush", &g_kmp_state.copies};
APSHIM_RESOLVE_AT_LOAD(next_flush)
constexpr std::uint64_t kSpinGapTicks = 50000;  // about 20 us at 2-3 GHz: a loop, not two separate flushes
thread_local std::uint64_t t_last_flush = 0;
thread_local const ident_t* t_last_flush_loc = nullptr;
}  // namespace

extern "C" __attribute__((visibility("default"))) void __kmpc_flush(ident_t* loc) {
    apshim::must_exist(next_flush.for_caller(APSHIM_CALLER), "__kmpc_flush")(loc);
    if (!apshim::host().confined()) return;
    std::uint64_t now = apshim::now_ticks(), last = t_last_flush;
    const ident_t* last_loc = t_last_flush_loc;
    t_last_flush = now;
    t_last_flush_loc = loc;
    if (now - last < kSpinGapTicks && loc == last_loc) sched_yield();
}

// `#pragma omp sections` in clang builds: each thread's share of the sections through
// __kmpc_for_static_init_4, whose ident carries the sections flag (KMP_IDENT_WORK_SECTIONS) and
// whose bounds count them. The fork cannot tell a `parallel sections` region from any other, so
// its forking thread counts the region's team here, the first time it meets two or more sections
// (whole_team.hpp: begin_sections_team; ompt_hooks.cpp: kmp_sections_begin). The other suffixes
// (_4u, _8, _8u) are static loops only: clang numbers sections with int.
namespace {
struct KmpIdent {  // ident_t's head (kmp.h)
    kmp_int32 reserved_1;
    kmp_int32 flags;
};
constexpr kmp_int32 kIdentWorkSections = 0x400;  // KMP_IDENT_WORK_SECTIONS
using StaticInit4 = void (*)(ident_t*, kmp_int32, kmp_int32, kmp_int32*, kmp_int32*, kmp_int32*, kmp_int32*,
                             kmp_int32, kmp_int32);
NextFn<StaticInit4> next_static_init_4{"__kmpc_for_static_init_4", &g_kmp_state.copies};
APSHIM_RESOLVE_AT_LOAD(next_static_init_4)
}  // namespace

extern "C" __attribute__((visibility("default"))) void __kmpc_for_static_init_4(
    ident_t* loc, kmp_int32 gtid, kmp_int32 schedule, kmp_int32* p_last, kmp_int32* p_lb, kmp_int32* p_ub,
    kmp_int32* p_st, kmp_int32 incr, kmp_int32 chunk) {
    auto fn = apshim::must_exist(next_static_init_4.for_caller(APSHIM_CALLER), "__kmpc_for_static_init_4");
    if (loc && (reinterpret_cast<const KmpIdent*>(loc)->flags & kIdentWorkSections) && p_lb && p_ub && incr == 1 &&
        hooks_on())
        kmp_sections_begin(static_cast<long>(*p_ub) - *p_lb + 1);
    fn(loc, gtid, schedule, p_last, p_lb, p_ub, p_st, incr, chunk);
}

#define APSHIM_KMP_DISPATCH_INIT(suffix, T, ST)                                                               \
    namespace {                                                                                               \
    NextFn<void (*)(ident_t*, kmp_int32, int, T, T, ST, ST)> next_dispatch_init_##suffix{                     \
        "__kmpc_dispatch_init_" #suffix, &g_kmp_state.copies};                                                \
    APSHIM_RESOLVE_AT_LOAD(next_dispatch_init_##suffix)                                                       \
    }                                                                                                         \
    extern "C" __attribute__((visibility("default"))) void __kmpc_dispatch_init_##suffix(                    \
        ident_t* loc, kmp_int32 gtid, int schedule, T lb, T ub, ST st, ST chunk) {                            \
        t_parkable_loop = parkable_schedule(schedule);                                                        \
        auto fn = apshim::must_exist(next_dispatch_init_##suffix.for_caller(APSHIM_CALLER),                   \
                                     "__kmpc_dispatch_init_" #suffix);                                        \
        if (hooks_on()) loop_started(g_kmp_state, kmp_thread_state());                                        \
        fn(loc, gtid, schedule, lb, ub, st, chunk);                                                           \
    }
APSHIM_KMP_DISPATCH_INIT(4, kmp_int32, kmp_int32)
APSHIM_KMP_DISPATCH_INIT(4u, std::uint32_t, kmp_int32)
APSHIM_KMP_DISPATCH_INIT(8, std::int64_t, std::int64_t)
APSHIM_KMP_DISPATCH_INIT(8u, std::uint64_t, std::int64_t)

#define APSHIM_KMP_DISPATCH_NEXT(suffix, T)                                                                   \
    namespace {                                                                                               \
    NextFn<int (*)(ident_t*, kmp_int32, kmp_int32*, T*, T*, T*)> next_dispatch_##suffix{                     \
        "__kmpc_dispatch_next_" #suffix, &g_kmp_state.copies};                                                \
    APSHIM_RESOLVE_AT_LOAD(next_dispatch_##suffix)                                                            \
    }                                                                                                         \
    extern "C" __attribute__((visibility("default"))) int __kmpc_dispatch_next_##suffix(                     \
        ident_t* loc, kmp_int32 gtid, kmp_int32* p_last, T* p_lb, T* p_ub, T* p_st) {                         \
        auto fn = apshim::must_exist(next_dispatch_##suffix.for_caller(APSHIM_CALLER),                        \
                                     "__kmpc_dispatch_next_" #suffix);                                        \
        auto thread_num = kmp.thread_num.get();                                                               \
        auto get_level = kmp.level.get();                                                                     \
        bool on = hooks_on() && thread_num && get_level;                                                      \
        if (on && t_parkable_loop && t_doacross == 0) park_if_surplus(g_kmp_state, kmp_thread_state(), thread_num(), get_level()); \
        if (on) {                                                                                             \
            resume_timing(g_kmp_state, kmp_thread_state());                                                   \
            note_progress(g_kmp_state, kmp_thread_state());                                                   \
        }                                                                                                     \
        int more = fn(loc, gtid, p_last, p_lb, p_ub, p_st);                                                   \
        if (on && !more) loop_exhausted(g_kmp_state);                                                         \
        return more;                                                                                          \
    }
APSHIM_KMP_DISPATCH_NEXT(4, kmp_int32)
APSHIM_KMP_DISPATCH_NEXT(4u, std::uint32_t)
APSHIM_KMP_DISPATCH_NEXT(8, std::int64_t)
APSHIM_KMP_DISPATCH_NEXT(8u, std::uint64_t)

// `#pragma omp task` in clang builds: __kmpc_omp_task_alloc, then __kmpc_omp_task to queue it.
// At allotment 1 (one CPU), a task made inside an explicit task runs at once instead
// (adapter.hpp: inline_tasks), exactly as clang runs a task whose if clause is false:
// __kmpc_omp_task_begin_if0, the task's entry, __kmpc_omp_task_complete_if0. Only a tied task
// with no flag beyond final, destructors or priority, and only the task the same thread just
// allocated: never an untied task's continuation (clang re-queues the running task through
// __kmpc_omp_task), a proxy, detachable or hidden-helper task, nor one with dependences (those
// go through __kmpc_omp_task_with_deps, not hooked).
namespace {
struct KmpTask {  // kmp_task_t's head, as clang lays it out
    void* shareds;
    kmp_int32 (*routine)(kmp_int32, KmpTask*);
};
using TaskAlloc = KmpTask* (*)(ident_t*, kmp_int32, kmp_int32, std::size_t, std::size_t, void*);
using TaskQueue = kmp_int32 (*)(ident_t*, kmp_int32, KmpTask*);
using TaskIf0 = void (*)(ident_t*, kmp_int32, KmpTask*);
NextFn<TaskAlloc> next_task_alloc{"__kmpc_omp_task_alloc", &g_kmp_state.copies};
NextFn<TaskQueue> next_task{"__kmpc_omp_task", &g_kmp_state.copies};
BesideFn<TaskIf0, TaskAlloc> real_begin_if0{next_task_alloc, "__kmpc_omp_task_begin_if0"};
BesideFn<TaskIf0, TaskAlloc> real_complete_if0{next_task_alloc, "__kmpc_omp_task_complete_if0"};
APSHIM_RESOLVE_AT_LOAD(next_task_alloc)
APSHIM_RESOLVE_AT_LOAD(next_task)
APSHIM_RESOLVE_AT_LOAD(real_begin_if0)
APSHIM_RESOLVE_AT_LOAD(real_complete_if0)
constexpr kmp_int32 kTied = 1, kFinal = 2, kDestructors = 8, kPriority = 32;  // kmp_tasking_flags bits
__attribute__((tls_model("initial-exec"))) thread_local KmpTask* t_inlinable = nullptr;  // last allocated, if eligible
}  // namespace

extern "C" __attribute__((visibility("default"))) KmpTask* __kmpc_omp_task_alloc(ident_t* loc, kmp_int32 gtid,
                                                                                kmp_int32 flags, std::size_t task_size,
                                                                                std::size_t shareds_size, void* entry) {
    KmpTask* task = apshim::must_exist(next_task_alloc.for_caller(APSHIM_CALLER), "__kmpc_omp_task_alloc")(loc, gtid, flags, task_size,
                                                                                       shareds_size, entry);
    t_inlinable = (flags & kTied) && (flags & ~(kTied | kFinal | kDestructors | kPriority)) == 0 ? task : nullptr;
    return task;
}

namespace {
// The task runs at once if it may (tasks_at_once, made inside an explicit task, one copy of
// libomp: begin/complete_if0 come from the first copy called), else is queued. Out of line, so
// that a task queued as made (every task while the job has two CPUs or more) is a tail call.
__attribute__((noinline)) kmp_int32 run_at_once_or_queue(ident_t* loc, kmp_int32 gtid, KmpTask* task,
                                                         TaskQueue real_fn) {
    if (hooks_on() && in_explicit_task(kmp_thread_state())) {
        TaskIf0 begin = real_begin_if0.get(), complete = real_complete_if0.get();
        if (begin && complete) {
            begin(loc, gtid, task);
            task->routine(gtid, task);
            complete(loc, gtid, task);
            return 0;  // TASK_CURRENT_NOT_QUEUED: the encountering task was not suspended
        }
    }
    return real_fn(loc, gtid, task);
}
}  // namespace

extern "C" __attribute__((visibility("default"))) kmp_int32 __kmpc_omp_task(ident_t* loc, kmp_int32 gtid,
                                                                          KmpTask* task) {
    auto real_fn = apshim::must_exist(next_task.for_caller(APSHIM_CALLER), "__kmpc_omp_task");
    bool inlinable = task != nullptr && task == t_inlinable;
    t_inlinable = nullptr;
    if (inlinable && g_kmp_state.tasks_at_once.load(std::memory_order_relaxed)) [[unlikely]]
        return run_at_once_or_queue(loc, gtid, task, real_fn);
    return real_fn(loc, gtid, task);
}

// Ordered turns: a progress mark each (shim/confine_check.hpp), as in gomp_hooks.cpp.
namespace {
using Ordered = void (*)(ident_t*, kmp_int32);
NextFn<Ordered> next_ordered{"__kmpc_ordered", &g_kmp_state.copies};
APSHIM_RESOLVE_AT_LOAD(next_ordered)
}  // namespace

extern "C" __attribute__((visibility("default"))) void __kmpc_ordered(ident_t* loc, kmp_int32 gtid) {
    auto real_fn = apshim::must_exist(next_ordered.for_caller(APSHIM_CALLER), "__kmpc_ordered");
    if (hooks_on()) note_progress(g_kmp_state, kmp_thread_state());
    real_fn(loc, gtid);
}
