// Timestamps for hooks. Per-task hooks use the CPU's time-stamp counter (about 10 ns to read
// here, against 25 ns for clock_gettime through the vDSO: research/libomp-hooks.md); the
// controller converts tick sums to nanoseconds with a rate it calibrates against
// CLOCK_MONOTONIC. Non-x86 builds use the monotonic clock for both.
#pragma once

#include <time.h>

#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace apshim {

// A time as a count of nanoseconds (gat/table.cpp has its own: the table knows no layer above it).
inline std::uint64_t timespec_ns(const timespec& ts) noexcept {
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

// `clock` now, into `ns`; false, `ns` left alone, where it cannot be read (a thread's CPU clock
// after the thread ended).
inline bool read_clock_ns(clockid_t clock, std::uint64_t& ns) noexcept {
    timespec ts;
    if (clock_gettime(clock, &ts) != 0) return false;
    ns = timespec_ns(ts);
    return true;
}

inline std::uint64_t now_ns() noexcept {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return timespec_ns(ts);
}

// The same clock in seconds (the one Python's time.monotonic() reads: bench tools print it).
inline double now_s() noexcept { return static_cast<double>(now_ns()) / 1e9; }

// Cheap, monotonic per-core-synchronised ticks (constant TSC on every x86-64 this targets).
inline std::uint64_t now_ticks() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    return __rdtsc();
#else
    return now_ns();
#endif
}

// Controller side: nanoseconds per tick, measured over the whole life of the process so far.
class TickRate {
public:
    double ns_per_tick() noexcept {
        std::uint64_t t = now_ticks(), n = now_ns();
        if (t0_ == 0) {
            t0_ = t;
            n0_ = n;
        } else if (n - n0_ > 2000000 && t > t0_) {  // 2 ms of history gives < 0.1% error
            rate_ = static_cast<double>(n - n0_) / static_cast<double>(t - t0_);
        }
        return rate_;
    }

private:
    std::uint64_t t0_ = 0, n0_ = 0;
    double rate_ = initial_guess();
    static double initial_guess() noexcept {
#if defined(__x86_64__) || defined(__i386__)
        return 1.0 / 2.5;  // until calibrated: a 2.5 GHz TSC
#else
        return 1.0;
#endif
    }
};

}  // namespace apshim
