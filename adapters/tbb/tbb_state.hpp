// State shared between the oneTBB hooks (inside TBB's threads) and the adapter (controller).
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <span>

#include "adapters/adapter.hpp"
#include "adapters/common/busy.hpp"
#include "adapters/common/park.hpp"
#include "adapters/common/thread_slots.hpp"

namespace apshim::tbb_adapter {

struct State {
    ThreadSlots<1024> slots;
    std::atomic<int> limit{0};              // threads allowed to execute tasks (main included); 0 = no throttling
    std::atomic<int> executing_workers{0};  // worker threads inside an outermost task right now
    // The hooks keep every task's busy flag and parking's rules (adapters/common/busy.hpp): on
    // while the shim caps TBB below its default concurrency where parking is wanted (confinement
    // off), or where the CPU clocks cannot measure the job; off while the job has all its
    // threads, when a task costs the hooks only their nesting counts.
    std::atomic<bool> timing{false};
    // And they stamp each busy interval with the time (timing on too), which then measures the
    // job: only where the CPU clocks fall short (APSHIM_P above the CPUs). Parking needs only the
    // flags, and the threads' CPU clocks measure a parked job as they measure a confined one (a
    // parked thread uses no CPU): without stamps a task costs the hooks no time-stamp read
    // (interval::kUnstamped). fib with tasks of half a microsecond, parked at allotment 1, took
    // 1.3x its one-thread time with four reads a task.
    std::atomic<bool> stamping{false};
    // oneTBB calls the task hooks (task_hooks.cpp, __itt_api_init: only where parking may be
    // needed). Without them nothing times a task, and the CPU clocks measure every cycle.
    std::atomic<bool> hooks{false};
    // A wait nested in another wait needs no bookkeeping (task_hooks.cpp, plain_nested): set by
    // the controller while the hooks are untimed and nothing holds TBB below its own concurrency
    // (tbb_adapter.cpp, holds_tbb_back),
    // so that the stall valve, which counts every wait as progress, is off. Its readers are
    // every nested wait: one relaxed load.
    std::atomic<bool> nested_waits_plain{true};
    // Serialises the two ways a worker's slot is claimed (task_hooks.cpp): by the thread creating
    // it (claim_for) and by the worker itself on its first event (adopting that slot, or claiming
    // one). Taken once per thread, never per task.
    std::atomic_flag claim_lock = ATOMIC_FLAG_INIT;
    std::atomic<int> parked{0};
    // The threads' CPU time, read by the parked (task_hooks.cpp, maybe_park): threads that are
    // inside tasks but use no CPU wait in user code, possibly for the task a parked worker would run.
    SharedCpuTotal cpu_total;
    std::atomic<bool> released{false};
    std::atomic<bool> seen{false};           // TBB used since start (or since fork)
    std::atomic<std::uint32_t> fork_generation{0};
    // The program created a global_control on max_allowed_parallelism: it chose how many threads
    // it runs, and may need every one of them (tasks meeting at a barrier sized by it: oneTBB's
    // test_task_arena deadlocked at APSHIM_P=8 with the shim's control at 3 under the program's
    // 4). As OpenMP's promised team sizes, that number is kept: from then on the shim does not
    // cap TBB's workers (CPU confinement, or parking where it cannot be, still holds the job to
    // its allotment). Sticky, not a count of live controls: a program that replaces its control
    // (destroy, then create) would otherwise get the shim's larger cap in between, and workers
    // that joined then stayed above the program's next limit (oneTBB's conformance_global_control:
    // 3 bodies at a limit of 2).
    std::atomic<bool> program_sets_parallelism{false};
    ParkingLot lot;
    // Workers parked inside a wait nested in their task (task_hooks.cpp, maybe_park_nested), one
    // entry each while parked: the wait_context it waits for, and a lot of its own, which
    // r1::notify_waiters (interposed) wakes when that context's count reaches 0. A worker that
    // finds no free entry does not park there.
    struct NestedPark {
        std::atomic<std::uintptr_t> wait_ctx{0};  // 0: free
        ParkingLot lot;
    };
    static constexpr int kNestedParkMax = 256;
    NestedPark nested[kNestedParkMax];
    std::atomic<int> nested_used{0};    // entries ever claimed (the high-water mark): the scans stop there
    std::atomic<int> nested_parked{0};  // workers parked in one now; notify_waiters scans only while not 0
    // The program's oneTBB has a wait_context of another layout than 2021's (tbb_abi.hpp): its
    // workers never park in nested waits. Set by the hooks, said once by the controller.
    std::atomic<bool> nested_layout_unknown{false};
    // The shim's live global_control (a GlobalControl*, see tbb_adapter.cpp), or null. Whoever
    // exchanges it out destroys it: the controller when replacing it, a thread entering
    // tbb::finalize when dropping it.
    std::atomic<void*> control{nullptr};
    // Controls dropped by finalize (destroyed in TBB, memory not yet freed): the controller frees
    // them (the finalizing thread runs program code and must not touch the heap for the shim).
    std::atomic<void*> retired{nullptr};
    // Threads inside tbb::finalize. While any is, the shim keeps no control and parks nobody:
    // a blocking finalize waits until every worker has left the program's arena, and a worker
    // comes back to empty that arena only while TBB's soft limit lets it (see task_hooks.cpp).
    std::atomic<int> finalizing{0};
};

// Workers parked in a nested wait re-check their escape rules now: those parked on `wait_ctx`
// (r1::notify_waiters: that wait is over), or every one where it is 0 (a rise of the allotment,
// release, finalize). Sequentially consistent loads: the notifier's half of its handshake with
// the parker (task_hooks.cpp, apshim_tbb_notify_waiters).
inline void wake_nested(State& s, std::uintptr_t wait_ctx = 0) noexcept {
    for (int i = 0, n = s.nested_used.load(); i < n; ++i) {
        const std::uintptr_t parked_on = s.nested[i].wait_ctx.load();
        if (parked_on != 0 && (wait_ctx == 0 || parked_on == wait_ctx)) s.nested[i].lot.wake_all();
    }
}

// Defined in tbb_adapter.cpp; inline because every task's hooks reach it.
extern State g_state __attribute__((visibility("hidden")));
inline State& state() noexcept { return g_state; }
Adapter& adapter() noexcept;
// Every oneTBB adapter of the process (one), used or not.
std::span<Adapter* const> adapters() noexcept;

// The concurrency oneTBB uses by default here (CPUs, or APSHIM_P when the shim shows more).
int tbb_default_concurrency() noexcept;

// The CPU count to show a caller inside libtbb (APSHIM_P when it exceeds the machine), else 0:
// the shim's sysconf/sched_getaffinity interposers ask (shim/cpu_hooks.cpp).
int cpus_shown_to(void* caller) noexcept;

// A tbb::detail::r1 entry point of the libtbb this process uses, or null: next_symbol()
// (adapters/common/next_fn.hpp), which also finds a libtbb dlopen()ed with RTLD_LOCAL (a plugin,
// a Python extension module). Allocates (dlsym): call once and cache, never on a per-task path.
void* tbb_symbol(const char* mangled) noexcept;

// Is code address `a` inside libtbb (its executable segment, looked up once)? Not for hot paths.
bool in_tbb(std::uintptr_t a) noexcept;

// Any thread, after it created `thread` through pthread_create (shim/thread_hooks.cpp): where
// libtbb created it (its frames: thread_hooks.cpp), its slot is claimed (worker_created).
void thread_created(pthread_t thread) noexcept;

// libtbb created a thread (thread_hooks.cpp -> task_hooks.cpp), with this CPU clock: its slot is
// claimed now, so the controller reads its CPU clock from its first cycle on, and the slot says
// it is a TBB worker; the worker adopts the slot on its first event.
void worker_created(clockid_t clock) noexcept;

// Called by hooks when TBB is seen in use: tells the shim once per process (and after fork).
inline void note_used() noexcept {
    State& s = state();
    if (!s.seen.load(std::memory_order_relaxed) && !s.seen.exchange(true)) host().runtime_started(adapter());
}

}  // namespace apshim::tbb_adapter
