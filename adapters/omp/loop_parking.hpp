// Parking inside long regions: a thread whose team index is at or beyond the allotment waits
// before fetching its next dynamic/guided chunk, so a running region shrinks to the allotment
// without waiting for the next fork. Inside the runtime's threads: no locks, no allocation.
//
// Escape rule (research/libomp-hooks.md: without one, programs hang): a parked thread leaves
// when the allotment grows, when any thread of the process finds a loop exhausted (then its
// own fetch returns "no more chunks" and it goes on to the barrier), or after a bounded wait.
// The master (thread 0) never parks. Static loops are never parked (their iterations are
// pre-assigned): they shrink at the next fork.
#pragma once

#include <atomic>
#include <cstdint>

#include "adapters/adapter.hpp"
#include "adapters/omp/region_runtime.hpp"

namespace apshim::omp_adapter {

// Called before a chunk fetch by team member `thread_num` (omp_get_thread_num) of an
// outermost region (`level` == 1).
inline void park_before_chunk(State& s, int thread_num, int level) noexcept {
    LoopParkingState& p = s.parking;
    if (level != 1 || thread_num <= 0) return;
    constexpr std::uint64_t kRecheckNs = 20000000ull;  // a lost wake-up costs at most 20 ms
    constexpr int kMaxWaits = 50;                      // and a park at most about one second
    std::uint32_t seen_end = p.exhausted.load(std::memory_order_acquire);
    for (int i = 0; i < kMaxWaits; ++i) {
        int limit = s.limit.load(std::memory_order_relaxed);
        if (limit <= 0 || thread_num < limit) return;
        if (p.exhausted.load(std::memory_order_acquire) != seen_end) return;
        std::uint32_t gen = p.lot.generation();
        p.parked.fetch_add(1, std::memory_order_relaxed);
        p.lot.wait(gen, kRecheckNs);
        p.parked.fetch_sub(1, std::memory_order_relaxed);
    }
}

// Called when a fetch returned "no more chunks": release every parked thread.
inline void loop_exhausted(State& s) noexcept {
    LoopParkingState& p = s.parking;
    p.exhausted.fetch_add(1, std::memory_order_release);
    if (p.parked.load(std::memory_order_relaxed) > 0) p.lot.wake_all();
}

}  // namespace apshim::omp_adapter
