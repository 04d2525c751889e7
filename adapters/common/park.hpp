// The one parking primitive every adapter uses: a futex word per adapter, and the one bounded
// parking loop around it.
//
// A thread that must leave (its runtime has more threads executing work than allowed) waits
// here at a safe point. The controller bumps the word's generation and wakes as many waiters as
// a rise of the allowance admits (wake(n)), or all of them at release; waiters re-check their
// condition after every wake-up. Every wait is bounded: a lost or withheld wake-up costs a
// little time, never a hang.
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>

#include "adapters/common/clock.hpp"

namespace apshim {

class ParkingLot {
public:
    // Sleeps until a wake that reaches this thread, or timeout_ns, whichever first. Returns
    // immediately when a wake happened after `seen` was read (pass the value of generation()).
    void wait(std::uint32_t seen, std::uint64_t timeout_ns) noexcept {
        timespec ts{static_cast<time_t>(timeout_ns / 1000000000ull), static_cast<long>(timeout_ns % 1000000000ull)};
        syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word_), FUTEX_WAIT_PRIVATE, seen, &ts, nullptr, 0);
    }
    std::uint32_t generation() const noexcept { return word_.load(std::memory_order_acquire); }
    // A new generation (waiters about to sleep return at once), and up to n sleepers woken: the
    // rise of an allowance, when any n of the waiters are as good as any others.
    void wake(int n) noexcept {
        word_.fetch_add(1, std::memory_order_acq_rel);
        syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word_), FUTEX_WAKE_PRIVATE, n, nullptr, nullptr, 0);
    }
    void wake_all() noexcept { wake(INT_MAX); }
    // In a fork() child, where no thread waits: back to generation 0.
    void reset() noexcept { word_.store(0, std::memory_order_relaxed); }

private:
    static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t));
    std::atomic<std::uint32_t> word_{0};
};

// How long one stay in a lot may last.
struct ParkBounds {
    std::uint64_t recheck_ns;  // each wait: the escape rules are asked again at least this often
    int max_waits;             // at most this many waits in all
    std::uint64_t max_ns;      // and, when not 0, at most this long since the first wait
    // When not 0, all the threads parked in the lot together ask about this many times per
    // recheck_ns: each wait lasts recheck_ns x parked / shared_polls (at least recheck_ns), from
    // the count at that wait. Counted at every wait, not once per stay: with 1000 threads parking
    // one after another, the first ones, which found few parked, polled every millisecond for
    // their whole stay, 8 times the intended rate in all (fifty-first session).
    int shared_polls = 0;
};

// How long a thread waits in a lot where `parked` others wait (ParkBounds::shared_polls).
inline std::uint64_t wait_ns(const ParkBounds& bounds, int parked) noexcept {
    if (bounds.shared_polls <= 0) return bounds.recheck_ns;
    return bounds.recheck_ns * static_cast<std::uint64_t>(std::max(1, parked / bounds.shared_polls));
}

// Waits in `lot` until `may_go_on()` (the runtime's escape rules, asked before every wait and
// after every wake-up) says the thread may go on, or the bounds are reached. `parked` counts the
// threads asleep in the lot. The generation is read before the question, so a wake between the
// two makes the wait return at once. Runs in the runtime's threads: no locks, no allocation.
template <class MayGoOn>
void park_until(ParkingLot& lot, std::atomic<int>& parked, const ParkBounds& bounds, MayGoOn may_go_on) noexcept {
    std::uint64_t first_wait = 0;
    for (int waits = 0; waits < bounds.max_waits; ++waits) {
        std::uint32_t gen = lot.generation();
        if (may_go_on()) return;
        if (bounds.max_ns) {
            std::uint64_t now = now_ns();
            if (first_wait == 0)
                first_wait = now;
            else if (now - first_wait >= bounds.max_ns)
                return;
        }
        const int others = parked.fetch_add(1, std::memory_order_relaxed);
        lot.wait(gen, wait_ns(bounds, others));
        parked.fetch_sub(1, std::memory_order_relaxed);
    }
}

}  // namespace apshim
