// Runs inside oneTBB's threads. Two sources of events:
//  - The exported entry points r1::wait and r1::execute_and_wait, interposed, always: time a
//    thread spends blocked there (stealing, running others' tasks, waiting) is not its own task's
//    work, an external thread's outermost wait is its time in TBB, and every wait is progress
//    (the stall valve's "a task began").
//  - ITT task hooks, only where parking may be needed: the shim is TBB's ITT collector
//    (INTEL_LIBITTNOTIFY64 points at libapshim.so, set in tbb_env.cpp), and oneTBB 2021.8
//    brackets every task body with __itt_stack_callee_enter/leave (task_dispatcher.h,
//    ITT_CALLEE_ENTER/LEAVE) once its loader found a collector. Otherwise the shim hands TBB no
//    ITT function at all (__itt_api_init below) and TBB runs its ITT-free code, as natively.
// And the places a worker may leave: right after an outermost task (maybe_park), and as it
// enters a wait nested in its task (maybe_park_nested).
// Rules for this file: no locks, no allocation, no logging.
#include <dlfcn.h>
#include <unistd.h>
#include <link.h>
#include <sched.h>
#include <sys/syscall.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>

#include <atomic>
#include <cstdint>

#include "adapters/common/busy.hpp"
#include "adapters/common/clock.hpp"
#include "adapters/common/next_fn.hpp"
#include "adapters/common/slot_sampler.hpp"
#include "adapters/tbb/tbb_abi.hpp"
#include "adapters/tbb/tbb_state.hpp"
#include "adapters/tbb/tcm_server.hpp"

namespace apshim::tbb_adapter {
namespace {

struct ThreadState {
    ThreadCounters* counters = nullptr;
    std::uint32_t generation = 0;
    int depth = 0;             // task nesting on this thread
    int wait_depth = 0;        // nesting of interposed waits on this thread
    bool busy = false;
    bool worker_outermost = false;  // the current depth-1 task began outside any wait: a TBB worker
    bool external = false;          // entered TBB through an outermost wait (busy.hpp)
    // Let go by the CPU escape (may_go_on): goes on without parking while the job's threads use
    // no more than their limit by half a processor (keep_going).
    bool cpu_pass = false;
};

__attribute__((tls_model("initial-exec"))) thread_local ThreadState t_state;

// State::claim_lock, held around a slot scan and claim (never per task).
class ClaimLock {
public:
    ClaimLock() noexcept {
        while (state().claim_lock.test_and_set(std::memory_order_acquire)) sched_yield();
    }
    ~ClaimLock() { state().claim_lock.clear(std::memory_order_release); }
};

// The thread's slot, claimed on its first event (and again after fork), or adopted if the thread
// that created it claimed one for it: the one slow path, where TBB's first use is also told to
// the shim.
__attribute__((noinline)) void attach(ThreadState& t, std::uint32_t gen) noexcept {
    note_used();
    {
        ClaimLock lock;
        // A slot with this thread's id may have been claimed for it by its creator (a worker):
        // adopt() takes it only if it still awaits this thread.
        ThreadCounters* mine = state().slots.find(static_cast<int>(syscall(SYS_gettid)));
        if (mine && state().slots.adopt(mine, &t.counters)) {
            t.counters = mine;  // given back when this thread exits
        } else {
            t.counters = state().slots.claim(&t.counters);  // given back when this thread exits
        }
    }
    t.generation = gen;
    t.depth = t.wait_depth = 0;
    t.busy = t.worker_outermost = false;
}

ThreadState& me() noexcept {
    ThreadState& t = t_state;
    std::uint32_t gen = state().fork_generation.load(std::memory_order_relaxed);
    if (!t.counters || t.generation != gen) [[unlikely]] attach(t, gen);
    return t;
}

bool timing() noexcept { return state().timing.load(std::memory_order_relaxed); }

// The time a busy interval opens or closes at: the time-stamp counter where the intervals
// measure the job, else none (tbb_state.hpp, stamping; busy.hpp, interval::kUnstamped).
std::uint64_t stamp() noexcept { return state().stamping.load(std::memory_order_relaxed) ? now_ticks() : interval::kUnstamped; }

// The thread's own busy flag beside its slot's interval (adapters/common/busy.hpp).
void begin_busy(ThreadState& t, std::uint64_t now) noexcept {
    t.busy = true;
    apshim::begin_busy(t.counters, now);
}

void end_busy(ThreadState& t, std::uint64_t now) noexcept {
    if (!t.busy) return;
    t.busy = false;
    apshim::end_busy(t.counters, now);
}

// ---- the parking rule ----
// A parked worker re-checks its reasons at least this often (every wait is bounded, and a
// worker that stopped being surplus, or whose co-workers all went idle, leaves the lot).
constexpr std::uint64_t kParkRecheckMinNs = 1000000ull, kParkRecheckMaxNs = 20000000ull;
// Progress valve: one stay in the lot never lasts longer than this. The worker then runs its next
// task (and may park again after it), so a surplus worker costs at most one task per 200 ms
// while no escape rule can see the thread that waits on it (see maybe_park).
constexpr std::uint64_t kMaxParkNs = 200000000ull;

// Called by a worker right after its outermost task returned. oneTBB calls callee_leave
// BEFORE it looks at what execute() returned: the worker may hold the next task (a bypass
// task: flow graph nodes, anything returning a successor), invisible to everyone else. Parking
// is therefore only allowed while another thread is executing a task (others_busy reads the
// other slots' busy_since: not in a nested wait): if nobody is, this worker may hold what they
// all wait for (a flow graph's next node) and must go on. Without this rule a serial flow graph
// at allotment 1 parked its only worker with the next node in hand, forever.
// A thread inside a task may also wait there without using a CPU, for a task nobody else can
// take: NPB-PSTL IS.W's main thread waits on a std::barrier inside a parallel_for task for the
// loop's other tasks, which only the parked worker would run. So, as OpenMP's parked threads do
// (adapters/omp/parking.hpp), a parked worker also goes on when the job's threads used less CPU
// than the limit admits, by half a processor, between the last two readings of their clocks
// (SharedCpuTotal, at least half a recheck apart), one worker per reading. Before, such a wait
// lasted until the 200 ms valve, each time: IS.W took 0.76 s at allotment 1 with parking only
// (APSHIM_CONFINE=0) against 0.1 s natively (seventy-sixth session).
ParkBounds park_bounds() noexcept {
    return {std::clamp(host().est_cycle_ns(), kParkRecheckMinNs, kParkRecheckMaxNs), INT_MAX, kMaxParkNs};
}

// The escape rules above, asked before every wait in the lot and after every wake-up. `t` is
// not one of executing_workers while it asks. The CPU escape gives it a pass (keep_going).
bool may_go_on(State& s, ThreadState& t, const ParkBounds& bounds) noexcept {
    int limit = s.limit.load(std::memory_order_relaxed);
    if (limit <= 0 || s.released.load(std::memory_order_relaxed) || s.finalizing.load(std::memory_order_relaxed) > 0) return true;
    if (!host().parking_wanted()) return true;  // confinement came into force meanwhile
    int allowed_workers = limit - 1;  // the main thread counts as one of the allotment
    if (s.executing_workers.load(std::memory_order_relaxed) < allowed_workers) return true;
    if (!others_busy(s.slots, t.counters)) return true;
    t.cpu_pass = s.cpu_total.room_for_one(s.slots, now_ns(), bounds.recheck_ns / 2, limit);
    return t.cpu_pass;
}

// A worker the CPU escape let go keeps going, without parking at its next task boundaries or
// nested waits, for as long as the job's threads use no more CPU than their limit by half a
// processor (read as the escape reads it). Otherwise the busy thread it was let go for, asleep
// in its task for work only this worker would bring (a bypass task it holds, its children),
// got one task per reading of the clocks: the worker parked again after each, and the CPU
// escape lets one worker go per reading. A parking program whose tasks sleep on each other
// then crawled: oneTBB's test_task_group, whose thread count the program sets itself, ran
// into its 300 s time-out (0.7 s natively) when parking held such programs (seventy-eighth
// session). Once the others work again, the job reads above its limit and the worker parks.
bool keep_going(State& s, ThreadState& t, const ParkBounds& bounds) noexcept {
    if (!t.cpu_pass) return false;
    const int limit = s.limit.load(std::memory_order_relaxed);
    t.cpu_pass = limit > 0 && s.cpu_total.within(s.slots, now_ns(), bounds.recheck_ns / 2, limit);
    return t.cpu_pass;
}

void maybe_park(ThreadState& t) noexcept {
    // Not while confinement enforces the allotment: parking is then only a cost (the kernel
    // holds the job to its CPUs, and a worker kept from such a wait costs the job time).
    if (!host().parking_wanted()) return;
    State& s = state();
    const ParkBounds bounds = park_bounds();
    if (keep_going(s, t, bounds)) return;
    park_until(s.lot, s.parked, bounds, [&] { return may_go_on(s, t, bounds); });
}

// ---- parking inside a nested wait ----
// A recursive program's workers (fib on a task_group, any divide and conquer) are inside a task
// from their first steal to the end of the run: each task waits for its children inside TBB, so
// a worker hardly ever ends an outermost task, and parking there held nothing (tests/tbb's
// tbb_fib at allotment 1 with parking only: 1.95 CPUs). So a surplus worker also parks as it
// enters a wait nested in its task (r1::wait: a task_group's, parallel_invoke's), before TBB
// would run its children or steal other work, and goes on when that wait is over (the wait
// context's count reaches 0, and r1::notify_waiters, interposed below, wakes it) or when an
// escape rule of maybe_park's says so (nobody else is working, the job uses less CPU than its
// allotment, the 200 ms valve). The task it holds waits for its children whoever runs them,
// and those are in its own task pool, where every other thread of the arena steals: parking
// there stops nothing anyone waits for. Inside task_arena::execute too, in an arena no other
// thread may be able to enter: while the others work, the worker waits its turn, which is what
// the allotment asks; once they stop, the escape rules let it go on (tests/tbb/tbb_arenas: not
// parking there, the worker kept a second CPU for its fib in its own arena, 1.6-1.7 CPUs at
// allotment 1; parking, 1.0). A wait_context of a layout other than oneTBB 2021's is never
// read (tbb_abi.hpp): such a worker does not park here, and the controller says so once.
const std::uint64_t* wait_count(void* wait_ctx) noexcept {
    const auto* w = static_cast<const tbb_abi::WaitContext*>(wait_ctx);
    if (w->version_and_traits != tbb_abi::kWaitContextVersion) {
        state().nested_layout_unknown.store(true, std::memory_order_relaxed);
        return nullptr;
    }
    return &w->ref_count;
}

bool wait_over(const std::uint64_t* count) noexcept { return __atomic_load_n(count, __ATOMIC_SEQ_CST) == 0; }

// A free entry of State::nested, now holding `wait_ctx`; null where none is free. Sequentially
// consistent with the notifier (see apshim_tbb_notify_waiters): the entry and the high-water mark
// are written before the worker counts itself parked and reads the wait's count.
State::NestedPark* claim_nested(State& s, void* wait_ctx) noexcept {
    const auto ctx = reinterpret_cast<std::uintptr_t>(wait_ctx);
    for (int i = 0; i < State::kNestedParkMax; ++i) {
        std::uintptr_t expected = 0;
        if (s.nested[i].wait_ctx.load(std::memory_order_relaxed) != 0 || !s.nested[i].wait_ctx.compare_exchange_strong(expected, ctx)) continue;
        int used = s.nested_used.load();
        while (used < i + 1 && !s.nested_used.compare_exchange_weak(used, i + 1)) {
        }
        return &s.nested[i];
    }
    return nullptr;
}

// A thread libtbb created (worker_created). A worker's waits are inside its tasks even where no
// task hook says so (the default, without them: a worker's first wait would look outermost, and
// counting a worker as an external thread would measure it by its time inside waits instead of
// its CPU clock).
bool is_worker(const ThreadState& t) noexcept { return t.counters && t.counters->worker.load(std::memory_order_relaxed); }

void maybe_park_nested(ThreadState& t, void* wait_ctx) noexcept {
    if (t.depth == 0 || !is_worker(t) || !timing() || !host().parking_wanted()) return;
    State& s = state();
    // Surplus: as many other workers execute tasks as the allotment admits (this one, when it
    // counts among them, left out).
    const int limit = s.limit.load(std::memory_order_relaxed);
    const bool counted = t.worker_outermost;
    if (limit <= 0 || s.executing_workers.load(std::memory_order_relaxed) - (counted ? 1 : 0) < limit - 1) return;
    const ParkBounds bounds = park_bounds();
    if (keep_going(s, t, bounds)) return;
    const std::uint64_t* count = wait_count(wait_ctx);
    if (!count || wait_over(count)) return;
    State::NestedPark* entry = claim_nested(s, wait_ctx);
    if (!entry) return;
    if (counted) s.executing_workers.fetch_sub(1, std::memory_order_relaxed);
    s.nested_parked.fetch_add(1);
    park_until(entry->lot, s.parked, bounds, [&] { return wait_over(count) || may_go_on(s, t, bounds); });
    s.nested_parked.fetch_sub(1);
    entry->wait_ctx.store(0, std::memory_order_release);
    if (counted) s.executing_workers.fetch_add(1, std::memory_order_relaxed);
}

// Untimed, the hooks keep only the nesting counts (which parking's "outermost task" needs the
// moment timing comes back) and the count of tasks begun (the stall valve's "a task began",
// tbb_adapter.cpp: a thread's CPU clock cannot tell a task from a spin), and close an interval
// the timed hooks left open, so that parking's rules never read a stale one.
void task_begin() noexcept {
    if (!host().enabled()) return;
    ThreadState& t = me();
    if (t.depth == 0 && t.wait_depth == 0 && t.counters) t.counters->in_task.store(1, std::memory_order_relaxed);
    bool outermost = t.depth++ == 0 && t.wait_depth == 0;
    count_event(t.counters);
    if (!timing()) {
        if (t.busy) [[unlikely]] end_busy(t, stamp());
        return;
    }
    std::uint64_t now = stamp();
    end_busy(t, now);
    if (outermost) {
        t.worker_outermost = true;
        state().executing_workers.fetch_add(1, std::memory_order_relaxed);
    }
    begin_busy(t, now);
}

void task_end() noexcept {
    if (!host().enabled()) return;
    ThreadState& t = me();
    if (t.depth > 0 && --t.depth == 0 && t.wait_depth == 0 && t.counters) t.counters->in_task.store(0, std::memory_order_relaxed);
    if (t.busy) end_busy(t, stamp());
    // Back in TBB's dispatch loop (a nested wait or the worker's outer loop): not busy.
    if (t.depth == 0 && t.worker_outermost) {
        t.worker_outermost = false;
        state().executing_workers.fetch_sub(1, std::memory_order_relaxed);
        maybe_park(t);  // a task boundary: the only place a worker may leave
    }
}

// ---- where libtbb's code is ----
// libtbb's executable segment, found once and published once: the first thread to claim the
// state (0 -> 2) writes the range, then sets 1 with release; a reader that sees 1 (acquire)
// reads the range written before it. Threads that race through the first call meanwhile use
// the range they found themselves. No lock, no shared word written by two threads.
std::uintptr_t g_tbb_lo = 0, g_tbb_hi = 0;
std::atomic<int> g_tbb_range_state{0};  // 0 unknown, 2 being published, 1 known

struct Range {
    std::uintptr_t lo = 0, hi = 0;
};

int find_tbb(dl_phdr_info* info, size_t, void* data) {
    const char* name = info->dlpi_name ? std::strrchr(info->dlpi_name, '/') : nullptr;
    name = name ? name + 1 : info->dlpi_name;
    if (!name || (std::strncmp(name, "libtbb.so", 9) != 0 && std::strncmp(name, "libtbb_debug.so", 15) != 0)) return 0;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const auto& ph = info->dlpi_phdr[i];
        if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
            auto* r = static_cast<Range*>(data);
            r->lo = info->dlpi_addr + ph.p_vaddr;
            r->hi = r->lo + ph.p_memsz;
            return 1;
        }
    }
    return 0;
}

}  // namespace

// Is code address `a` inside libtbb? Rare calls only: the loader's one call of __itt_api_init,
// a thread creation (thread_hooks.cpp). Until libtbb is loaded, each call looks for it again.
bool in_tbb(std::uintptr_t a) noexcept {
    int known = g_tbb_range_state.load(std::memory_order_acquire);
    if (known != 1) {
        Range r;
        dl_iterate_phdr(&find_tbb, &r);
        int expected = 0;
        // Published only once found: libtbb may be dlopen()ed later (a plugin, a Python module),
        // and threads are created before that.
        if (known == 0 && r.hi != 0 && g_tbb_range_state.compare_exchange_strong(expected, 2, std::memory_order_relaxed)) {
            g_tbb_lo = r.lo;
            g_tbb_hi = r.hi;
            g_tbb_range_state.store(1, std::memory_order_release);
        }
        return a >= r.lo && a < r.hi;
    }
    return a >= g_tbb_lo && a < g_tbb_hi;
}

void worker_created(clockid_t clock) noexcept {
    if (!host().enabled()) return;
    // glibc's thread CPU clocks encode the kernel thread id (MAKE_THREAD_CPUCLOCK: ~tid << 3 | 6).
    if ((clock & 7) != 6) return;
    int tid = static_cast<int>(~(clock >> 3));
    ClaimLock lock;
    // The worker may have run its first hook already (then it claimed a slot of its own), and its
    // first wait may have counted it as an external thread meanwhile: it is not one.
    ThreadCounters* c = state().slots.find(tid);
    if (c) c->external.store(0, std::memory_order_relaxed);
    else c = state().slots.claim_for(tid, clock);
    if (c) c->worker.store(1, std::memory_order_relaxed);
}

namespace {

// Waiting inside a task, or an external thread (main) entering TBB: not busy until it returns
// (the tasks it runs meanwhile are). An external thread's outermost wait is also its time in TBB
// for untimed cycles (busy.hpp: begin_outer), running tasks or waiting for them. Every wait
// counts as an event (progress, for the stall valve and lending), and a thread inside a wait is
// inside TBB (in_task), with or without the task hooks.
struct WaitScope {
    ThreadState& t;
    bool outermost, resume;
    WaitScope() noexcept : t(me()), outermost(enters_tbb(t) && !is_worker(t)), resume(t.busy) {
        if (t.depth == 0 && t.wait_depth == 0 && t.counters) t.counters->in_task.store(1, std::memory_order_relaxed);
        ++t.wait_depth;
        count_event(t.counters);
        if (!resume && !outermost) return;  // untimed, a nested wait: nothing to time
        if (!outermost) {
            end_busy(t, stamp());
            return;
        }
        // The outer interval is always timed: it measures an external thread in untimed cycles.
        std::uint64_t now = now_ticks();
        end_busy(t, now);
        if (!t.external) mark_external(t);
        begin_outer(t.counters, now);
    }
    ~WaitScope() {
        if (--t.wait_depth == 0 && t.depth == 0 && t.counters) t.counters->in_task.store(0, std::memory_order_relaxed);
        if (outermost) end_outer(t.counters, now_ticks());
        else if (resume && timing()) begin_busy(t, stamp());
    }
    static bool enters_tbb(const ThreadState& t) noexcept { return t.depth == 0 && t.wait_depth == 0; }
    static void mark_external(ThreadState& t) noexcept {
        t.external = true;
        if (t.counters) t.counters->external.store(1, std::memory_order_relaxed);
    }
};

// The task hooks TBB calls once it has them (__itt_api_init). Only libtbb gets them, so every
// call is one of TBB's tasks.
char g_tbb_caller;
void* stack_caller_create() { return &g_tbb_caller; }
void stack_caller_destroy(void*) {}
void stack_callee_enter(void*) { task_begin(); }
void stack_callee_leave(void*) { task_end(); }

// Should TBB get the task hooks? They cost TBB's ITT-present code paths (about 120 instructions
// per task in oneTBB 2021.8, whatever the hooks do) plus the hooks themselves, for as long as
// the process runs: oneTBB decides once, at its first use, whether a collector is present. They
// are needed only where a worker may have to park at a task boundary, that is where confinement
// can never enforce the allotment (the user binds threads, APSHIM_CONFINE=0), and where the CPU
// clocks cannot measure the job (APSHIM_P above the CPUs: busy.hpp's timed measure).
bool task_hooks_wanted() noexcept {
    return host().enabled() && (!host().confinement_possible() || cpu_clocks_fall_short());
}

}  // namespace
}  // namespace apshim::tbb_adapter

using namespace apshim::tbb_adapter;

// ---- the ITT collector entry point ----
// ittnotify's static loader (compiled into libtbb, and into libomp, which read the same
// INTEL_LIBITTNOTIFY64) finds __itt_api_init in the collector and lets it fill the caller's
// table of ITT function pointers (lib_version 2 of ittnotify_static.c). Every pointer gets its
// "null" value (no collector: the loader's own default), except that libtbb, when the task hooks
// are wanted, gets the four stack functions. A loader that is given nothing but null values
// reports no collector, and its runtime then runs the same code as without INTEL_LIBITTNOTIFY64.
extern "C" __attribute__((visibility("default"))) void __itt_api_init(apshim::itt_abi::Global* g, int /*init_groups*/) {
    if (!g || std::memcmp(g->magic, apshim::itt_abi::kMagic, sizeof g->magic) != 0 || !g->api_list) return;  // not a layout we know
    bool hooks = in_tbb(reinterpret_cast<std::uintptr_t>(__builtin_return_address(0))) && task_hooks_wanted();
    struct Hook {
        const char* name;
        void* fn;
    };
    const Hook given[] = {
        {"__itt_stack_caller_create", reinterpret_cast<void*>(&stack_caller_create)},
        {"__itt_stack_caller_destroy", reinterpret_cast<void*>(&stack_caller_destroy)},
        {"__itt_stack_callee_enter", reinterpret_cast<void*>(&stack_callee_enter)},
        {"__itt_stack_callee_leave", reinterpret_cast<void*>(&stack_callee_leave)},
    };
    for (apshim::itt_abi::ApiInfo* a = g->api_list; a->name; ++a) {
        void* fn = a->null_func;
        if (hooks)
            for (const Hook& h : given)
                if (std::strcmp(a->name, h.name) == 0) fn = h.fn;
        if (a->func_ptr) *a->func_ptr = fn;
    }
    if (hooks) state().hooks.store(true, std::memory_order_relaxed);
}

// ---- interposed oneTBB entry points (tbb::detail::r1::..., names in tbb_abi.hpp) ----

extern "C" __attribute__((visibility("default"))) void apshim_tbb_wait(void* wait_ctx, void* ctx) __asm__(APSHIM_TBB_WAIT);
extern "C" __attribute__((visibility("default"))) void apshim_tbb_execute_and_wait(void* t, void* t_ctx, void* wait_ctx,
                                                                                   void* w_ctx) __asm__(APSHIM_TBB_EXECUTE_AND_WAIT);

// libtbb's definitions behind ours (adapters/common/next_fn.hpp: looked up at load, and behind
// RTLD_LOCAL on a call that finds none; no function-local static guard a fork could leave taken).
namespace {
apshim::NextFn<void (*)(void*, void*)> next_wait{APSHIM_TBB_WAIT};
apshim::NextFn<void (*)(void*, void*, void*, void*)> next_execute_and_wait{APSHIM_TBB_EXECUTE_AND_WAIT};
APSHIM_RESOLVE_AT_LOAD(next_wait)
APSHIM_RESOLVE_AT_LOAD(next_execute_and_wait)

// A wait nested in another wait of the same thread changes nothing the shim reads while
// State::nested_waits_plain holds: its thread is inside TBB already (in_task), it is no outermost
// entry, and its event would only feed the stall valve, which is off then. So it goes straight
// to libtbb (a tail call: one branch and a jump). It leaves wait_depth alone: every rule reads
// only whether that is 0, and the enclosing wait, which counted, holds it above 0 throughout.
// Recursive task programs (fib: a wait in every task) pay this on every task; the full
// WaitScope cost them 67 instructions a task.
bool plain_nested() noexcept {
    return t_state.wait_depth > 0 && state().nested_waits_plain.load(std::memory_order_relaxed);
}

__attribute__((noinline)) void full_wait(void* wait_ctx, void* ctx) {
    auto fn = apshim::must_exist(next_wait.get(), APSHIM_TBB_WAIT);
    if (!apshim::host().enabled()) return fn(wait_ctx, ctx);
    WaitScope scope;
    if (!scope.outermost) maybe_park_nested(scope.t, wait_ctx);
    fn(wait_ctx, ctx);
}

__attribute__((noinline)) void full_execute_and_wait(void* t, void* t_ctx, void* wait_ctx, void* w_ctx) {
    auto fn = apshim::must_exist(next_execute_and_wait.get(), APSHIM_TBB_EXECUTE_AND_WAIT);
    if (!apshim::host().enabled()) return fn(t, t_ctx, wait_ctx, w_ctx);
    WaitScope scope;
    fn(t, t_ctx, wait_ctx, w_ctx);
}

}  // namespace

// Not yet looked up (libtbb dlopen()ed later): the full path looks it up.
void apshim_tbb_wait(void* wait_ctx, void* ctx) {
    if (plain_nested())
        if (auto fn = next_wait.get_if_known()) [[likely]] return fn(wait_ctx, ctx);
    full_wait(wait_ctx, ctx);
}

void apshim_tbb_execute_and_wait(void* t, void* t_ctx, void* wait_ctx, void* w_ctx) {
    if (plain_nested())
        if (auto fn = next_execute_and_wait.get_if_known()) [[likely]] return fn(t, t_ctx, wait_ctx, w_ctx);
    full_execute_and_wait(t, t_ctx, wait_ctx, w_ctx);
}

// r1::notify_waiters(addr): a wait_context's count reached 0 (TBB's own use: waking threads that
// sleep in an external wait for it). A worker parked in a nested wait for that context
// (maybe_park_nested) goes on now. While none is parked, one load: the call comes once per
// task_group a recursive program waits for. Sequentially consistent against the parker, which
// claims its entry, counts itself in nested_parked and then reads the count: TBB lowered the count
// (a sequentially consistent fetch_add) before calling here, so either this load sees the parker
// counted, and then its entry, or the parker sees the count at 0 and does not sleep.
extern "C" __attribute__((visibility("default"))) void apshim_tbb_notify_waiters(std::uintptr_t wait_ctx) __asm__(APSHIM_TBB_NOTIFY_WAITERS);

namespace {
apshim::NextFn<void (*)(std::uintptr_t)> next_notify_waiters{APSHIM_TBB_NOTIFY_WAITERS};
APSHIM_RESOLVE_AT_LOAD(next_notify_waiters)

// Someone is parked in a nested wait, or libtbb's function is not looked up yet.
__attribute__((noinline)) void notify_waiters_slow(std::uintptr_t wait_ctx) noexcept {
    State& s = state();
    if (s.nested_parked.load() != 0) wake_nested(s, wait_ctx);
    apshim::must_exist(next_notify_waiters.get(), APSHIM_TBB_NOTIFY_WAITERS)(wait_ctx);
}
}  // namespace

// The common path is two loads, two tests and a jump: it runs for every task_group a recursive
// program waits for (tests/cost: fib without a cutoff, 7 instructions a task).
void apshim_tbb_notify_waiters(std::uintptr_t wait_ctx) {
    auto fn = next_notify_waiters.get_if_known();
    if (fn && state().nested_parked.load() == 0) [[likely]] return fn(wait_ctx);
    notify_waiters_slow(wait_ctx);
}

// The program's own global_control objects on max_allowed_parallelism: the program chose its
// thread count and may need all of them (see State::program_sets_parallelism).
namespace {
using ProgramControl = apshim::tbb_abi::GlobalControl;
bool sets_parallelism(const ProgramControl& c) { return c.param == apshim::tbb_abi::kMaxAllowedParallelism; }
}  // namespace

extern "C" __attribute__((visibility("default"))) void apshim_tbb_gc_create(ProgramControl& c) __asm__(APSHIM_TBB_GC_CREATE);

namespace {
apshim::NextFn<void (*)(ProgramControl&)> next_gc_create{APSHIM_TBB_GC_CREATE};
apshim::NextFn<void (*)(ProgramControl&)> next_gc_destroy{APSHIM_TBB_GC_DESTROY};
APSHIM_RESOLVE_AT_LOAD(next_gc_create)
APSHIM_RESOLVE_AT_LOAD(next_gc_destroy)
}  // namespace

void apshim_tbb_gc_create(ProgramControl& c) {
    auto fn = apshim::must_exist(next_gc_create.get(), APSHIM_TBB_GC_CREATE);
    bool sets = apshim::host().enabled() && sets_parallelism(c);
    if (sets) state().program_sets_parallelism.store(true, std::memory_order_relaxed);
    fn(c);
    // oneTBB applies the new limit to its market, not to the grants of a TCM: the shim's grants
    // follow it now, before the program's next parallel loop (tcm_server.hpp).
    if (sets) apshim::tbb_adapter::tcm::regrant();
}

// tbb::finalize(handle, mode): a blocking finalize waits until the program's arena is destroyed,
// which needs a worker to come back and find it empty. The main thread leaves the arena first;
// if TBB's soft limit then drops to 0 workers (the shim's control at 1: an idle job beside a
// co-runner is given one processor), the arena stays orphaned and finalize spins in
// market::release for ever (seen in 3 of 3 runs beside a co-runner, tests/tbb/test_no_leak.py).
// So for the duration the shim drops its control (TBB is back to the program's own limits) and
// creates none (tbb_adapter.cpp checks `finalizing` before and after creating one).
extern "C" __attribute__((visibility("default"))) bool apshim_tbb_finalize(void* handle, std::intptr_t mode) __asm__(APSHIM_TBB_FINALIZE);

namespace {
apshim::NextFn<bool (*)(void*, std::intptr_t)> next_finalize{APSHIM_TBB_FINALIZE};
APSHIM_RESOLVE_AT_LOAD(next_finalize)
}  // namespace

bool apshim_tbb_finalize(void* handle, std::intptr_t mode) {
    auto fn = apshim::must_exist(next_finalize.get(), APSHIM_TBB_FINALIZE);
    // Mode 0 (release_nothrowing: a handle's destructor or release()) does not wait: leave it be.
    if (!apshim::host().enabled() || mode == 0) return fn(handle, mode);
    auto destroy = apshim::must_exist(next_gc_destroy.get(), APSHIM_TBB_GC_DESTROY);
    State& s = state();
    // finalize_throwing may throw (unsafe_wait): the count must come down on that path too.
    struct Finalizing {
        State& s;
        explicit Finalizing(State& st) noexcept : s(st) { s.finalizing.fetch_add(1); }
        ~Finalizing() { s.finalizing.fetch_sub(1); }
    } scope(s);
    s.lot.wake_all();  // parked workers go back to TBB and leave the arena
    wake_nested(s);
    if (void* c = s.control.exchange(nullptr)) {
        destroy(*static_cast<ProgramControl*>(c));  // the shim's own control: the same type
        // Freed by the controller; a second finalize racing for the slot leaks one small object.
        void* expected = nullptr;
        s.retired.compare_exchange_strong(expected, c);
    }
    return fn(handle, mode);
}
