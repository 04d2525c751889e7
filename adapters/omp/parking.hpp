// Parking inside long regions: a thread whose team index is at or beyond the allotment waits
// before it fetches a dynamic/guided chunk (it holds no iteration there), so a running region's
// busy threads shrink to the allotment, and grow back when the allotment rises. Never before a
// task body: the thread has dequeued the task, and a teammate may wait for it in a taskwait
// (BOTS stalled for minutes); confinement (shim/confine.hpp) enforces the allotment there.
// Runs inside the runtime's threads: no locks, no allocation.
//
// Escape rule (research/libomp-hooks.md: without one, programs hang, because a parked thread
// may hold what its teammates wait for: a task it already dequeued, a tied continuation, its
// arrival at a barrier). A parked thread goes on when
//   - the allotment admits it (set_active wakes the lot), or
//   - any thread finds a loop exhausted (its own fetch will then say "no more chunks"), or
//   - no other thread of the runtime is executing work (everyone else waits for something,
//     possibly for us): polled every kRecheckNs, or
//   - kMaxWaits polls passed (a bound, so a mistake costs time, never a hang).
// The master (team index 0) never parks; static loops are never parked (their iterations are
// pre-assigned). Nobody parks while confinement is in force (Host::parking_wanted, adapter.hpp).
#pragma once

#include <atomic>
#include <cstdint>

#include "adapters/common/busy.hpp"
#include "adapters/common/park.hpp"
#include "adapters/omp/omp_state.hpp"
#include "adapters/omp/thread_state.hpp"

namespace apshim::omp_adapter {

constexpr std::uint64_t kRecheckNs = 1000000;  // escape-rule poll: at most 1 ms of extra delay
constexpr int kMaxWaits = 1000;                // one park lasts about a second at most

inline bool beyond_limit(State& s, int index) noexcept {
    int limit = s.limit.load(std::memory_order_relaxed);
    return limit > 0 && index >= limit;
}

inline void park(State& s, ThreadState& t, int index) noexcept {
    push_frame(s, t, /*wait=*/true);  // parked time is not work, for us and for the escape rule
    std::uint32_t loops_seen = s.loops_exhausted.load(std::memory_order_acquire);
    park_until(s.lot, s.parked, ParkBounds{kRecheckNs, kMaxWaits, 0}, [&] {
        return !beyond_limit(s, index) || s.loops_exhausted.load(std::memory_order_acquire) != loops_seen ||
               !others_busy(s.slots, t.counters);
    });
    pop_frame(s, t);
}

// Before a thread takes new work. `level` 1 = a thread of an outermost region; nested teams
// are left alone (their size is the program's business).
inline void park_if_surplus(State& s, ThreadState& t, int index, int level) noexcept {
    if (level == 1 && index > 0 && beyond_limit(s, index) && host().parking_wanted()) park(s, t, index);
}

// A chunk fetch returned "no more chunks": release every parked thread.
inline void loop_exhausted(State& s) noexcept {
    s.loops_exhausted.fetch_add(1, std::memory_order_release);
    if (s.parked.load(std::memory_order_relaxed) > 0) s.lot.wake_all();
}

}  // namespace apshim::omp_adapter
