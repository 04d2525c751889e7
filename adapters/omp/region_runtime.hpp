// What the libomp and libgomp adapters share: both throttle at region forks (team size) and
// measure by timing each thread's share of a region (the outlined function), so one Adapter
// implementation serves both, with one State per runtime.
#pragma once

#include <atomic>
#include <cstdint>

#include "adapters/adapter.hpp"
#include "adapters/common/clock.hpp"
#include "adapters/common/park.hpp"
#include "adapters/common/slot_sampler.hpp"
#include "adapters/common/thread_slots.hpp"

namespace apshim::omp_adapter {

// Parking inside long regions (loop_parking.hpp): woken by loop ends and raised limits.
struct LoopParkingState {
    ParkingLot lot;
    std::atomic<std::uint32_t> exhausted{0};
    std::atomic<int> parked{0};
};

struct State {
    ThreadSlots<1024> slots;
    LoopParkingState parking;
    std::atomic<int> limit{0};  // team size for new outermost regions; 0 = not throttling
    std::atomic<bool> seen{false};
    std::atomic<std::uint32_t> fork_generation{0};
};

class RegionRuntime final : public Adapter {
public:
    RegionRuntime(const char* name, State& state) : name_(name), state_(state) {}
    const char* name() const override { return name_; }
    Sample sample() override;
    void set_active(int n) override {
        if (n < 1) n = 1;
        if (n > state_.limit.exchange(n, std::memory_order_relaxed)) state_.parking.lot.wake_all();
    }
    int active() const override { return state_.limit.load(std::memory_order_relaxed); }
    void release() override {
        state_.limit.store(0);
        state_.parking.lot.wake_all();
    }
    void after_fork_child();

private:
    const char* name_;
    State& state_;
    SlotSampler sampler_;
};

// Per-thread timing of a thread's part of a region (nesting counted once).
struct ThreadTiming {
    ThreadCounters* counters = nullptr;
    std::uint32_t generation = 0;
    int depth = 0;
};

inline void region_enter(State& s, ThreadTiming& t) noexcept {
    std::uint32_t gen = s.fork_generation.load(std::memory_order_relaxed);
    if (!t.counters || t.generation != gen) {
        t.counters = s.slots.claim();
        t.generation = gen;
        t.depth = 0;
    }
    if (t.depth++ == 0 && t.counters) {
        t.counters->events.store(t.counters->events.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
        t.counters->busy_since.store(now_ticks(), std::memory_order_relaxed);
    }
}

inline void region_leave(ThreadTiming& t) noexcept {
    if (--t.depth > 0 || !t.counters) return;
    std::uint64_t since = t.counters->busy_since.load(std::memory_order_relaxed), now = now_ticks();
    if (since && now > since)  // single writer: load + store, no locked instruction
        t.counters->busy_ns.store(t.counters->busy_ns.load(std::memory_order_relaxed) + (now - since),
                                  std::memory_order_relaxed);
    t.counters->busy_since.store(0, std::memory_order_relaxed);
}

// Team size for an outermost region that asked for `requested` threads (0 = the default).
// The program's own request (num_threads clause, omp_set_num_threads, OMP_NUM_THREADS) stays an
// upper bound; a default request gets the allotment, up to APSHIM_P even above the core count.
int team_size(State& s, int requested) noexcept;

// `name` from the same library that defines `defined` (a real entry point found with
// RTLD_NEXT). With libomp and libgomp both loaded, RTLD_NEXT alone could answer omp_* from the
// wrong runtime (research/libomp-hooks.md). Null when not found. Controller-free: first use only.
void* symbol_beside(void* defined, const char* name) noexcept;

// The program's own thread-count setting if any (omp_set_num_threads or OMP_NUM_THREADS), else 0.
int user_thread_setting() noexcept;

}  // namespace apshim::omp_adapter
