// The one parking primitive every adapter uses: a futex word per adapter.
//
// A thread that must leave (its runtime has more threads executing work than allowed) waits
// here at a safe point. The controller bumps the word's generation and wakes all when the
// allowance rises or at release; waiters re-check their condition after every wake-up.
// Every wait is bounded (timeout_ns): a lost wake-up costs a little time, never a hang.
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

namespace apshim {

class ParkingLot {
public:
    // Sleeps until wake_all() or timeout_ns, whichever first. Returns immediately when a
    // wake_all() happened after `seen` was read (pass the value of generation()).
    void wait(std::uint32_t seen, std::uint64_t timeout_ns) noexcept {
        timespec ts{static_cast<time_t>(timeout_ns / 1000000000ull), static_cast<long>(timeout_ns % 1000000000ull)};
        syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word_), FUTEX_WAIT_PRIVATE, seen, &ts, nullptr, 0);
    }
    std::uint32_t generation() const noexcept { return word_.load(std::memory_order_acquire); }
    void wake_all() noexcept {
        word_.fetch_add(1, std::memory_order_acq_rel);
        syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word_), FUTEX_WAKE_PRIVATE, 0x7fffffff, nullptr, nullptr, 0);
    }
    // In a fork() child, where no thread waits: back to generation 0.
    void reset() noexcept { word_.store(0, std::memory_order_relaxed); }

private:
    static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t));
    std::atomic<std::uint32_t> word_{0};
};

}  // namespace apshim
