// State shared between the oneTBB hooks (inside TBB's threads) and the adapter (controller).
#pragma once

#include <atomic>
#include <cstdint>

#include "adapters/adapter.hpp"
#include "adapters/common/park.hpp"
#include "adapters/common/thread_slots.hpp"

namespace apshim::tbb_adapter {

struct State {
    ThreadSlots<1024> slots;
    std::atomic<int> limit{0};              // threads allowed to execute tasks (main included); 0 = no throttling
    std::atomic<int> executing_workers{0};  // worker threads inside an outermost task right now
    std::atomic<int> external_waiters{0};   // non-worker threads (main) blocked in a TBB wait, running tasks
    std::atomic<int> parked{0};
    std::atomic<bool> released{false};
    std::atomic<bool> seen{false};           // TBB used since start (or since fork)
    std::atomic<std::uint32_t> fork_generation{0};
    // Live program-owned global_controls that raise max_allowed_parallelism above TBB's default:
    // the program oversubscribes on purpose (blocking or spinning tasks that need that many
    // threads), so capping it could deadlock it. While any exists the shim does not throttle TBB.
    std::atomic<int> oversubscribing_controls{0};
    ParkingLot lot;
};

State& state() noexcept;
Adapter& adapter() noexcept;

// Parks the calling worker, right after it finished an outermost task, while more workers are
// executing than the limit allows. Bounded waits; never parks the last thread that could run work.
void maybe_park() noexcept;

// The concurrency oneTBB uses by default here (CPUs, or APSHIM_P when the shim shows more).
int tbb_default_concurrency() noexcept;

// Called by hooks when TBB is seen in use: tells the shim once per process (and after fork).
inline void note_used() noexcept {
    State& s = state();
    if (!s.seen.load(std::memory_order_relaxed) && !s.seen.exchange(true)) runtime_started(adapter());
}

}  // namespace apshim::tbb_adapter
