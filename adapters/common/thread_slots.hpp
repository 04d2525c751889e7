// Per-thread counters in padded cache lines, registered lock-free on a thread's first event.
//
// Hooks write only their own slot (relaxed stores by the owner); the controller sums all slots.
// Slots are never freed: a thread that exits leaves its totals behind, which is exactly what the
// controller's "difference since last sample" needs. 1024 slots cover any sane runtime; a thread
// beyond that is simply not measured (its slot pointer is null).
#pragma once

#include <atomic>
#include <cstdint>

namespace apshim {

struct alignas(64) ThreadCounters {
    std::atomic<std::uint64_t> busy_ns{0};     // completed busy intervals
    std::atomic<std::uint64_t> busy_since{0};  // start of the open busy interval, 0 when not busy
    std::atomic<std::uint64_t> events{0};      // tasks/chunks begun (activity indicator)
};

template <int N = 1024>
class ThreadSlots {
public:
    ThreadCounters* claim() noexcept {
        int i = used_.fetch_add(1, std::memory_order_relaxed);
        return i < N ? &slots_[i] : nullptr;
    }
    int used() const noexcept {
        int u = used_.load(std::memory_order_acquire);
        return u < N ? u : N;
    }
    ThreadCounters& operator[](int i) noexcept { return slots_[i]; }
    // After fork only the forking thread survives: forget every slot.
    void reset_after_fork() noexcept {
        for (int i = 0; i < used(); ++i) {
            slots_[i].busy_ns.store(0);
            slots_[i].busy_since.store(0);
            slots_[i].events.store(0);
        }
        used_.store(0);
    }

    // Busy time of all threads up to `now`, counting open intervals up to now.
    std::uint64_t total_busy(std::uint64_t now) noexcept {
        std::uint64_t sum = 0;
        for (int i = 0, n = used(); i < n; ++i) {
            sum += slots_[i].busy_ns.load(std::memory_order_relaxed);
            std::uint64_t since = slots_[i].busy_since.load(std::memory_order_relaxed);
            if (since != 0 && since < now) sum += now - since;
        }
        return sum;
    }
    std::uint64_t total_events() noexcept {
        std::uint64_t sum = 0;
        for (int i = 0, n = used(); i < n; ++i) sum += slots_[i].events.load(std::memory_order_relaxed);
        return sum;
    }

private:
    std::atomic<int> used_{0};
    ThreadCounters slots_[N];
};

}  // namespace apshim
