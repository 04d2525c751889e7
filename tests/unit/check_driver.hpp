// What the probing checks' unit tests share (test_confine_check, test_idle_check,
// test_width_check): a job driven through its check one 5 ms controller cycle at a time, making
// whole progress marks out of a rate per ms.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>

namespace apshim::test {

constexpr std::uint64_t kMs = 1'000'000;
constexpr std::uint64_t kCycle = 5 * kMs;
constexpr int cycles(std::uint64_t ns) { return static_cast<int>(ns / kCycle); }

// `Job` (the test's driver) has `check` and `cycle()`; this gives it the clock, the marks and
// `until`.
template <class Job, class Check>
struct CheckDriver {
    Check check;
    std::uint64_t now = 0;
    double carry = 0;  // marks not yet whole

    // The cycle's whole marks at `per_ms` marks a ms over `ms` (wall or CPU) ms; the fraction is
    // carried into the next cycle.
    std::uint64_t marks(double per_ms, double ms) {
        carry += per_ms * ms;
        auto whole = static_cast<std::uint64_t>(carry);
        carry -= static_cast<double>(whole);
        return whole;
    }
    // Runs `ns` of cycles, requiring the check never to be in phase `never`; the highest ratio a
    // probe read (0: none), at the cycles where Job::read_now(check) says a probe was decided.
    double highest_reading(typename Check::Phase never, std::uint64_t ns) {
        double highest = 0;
        for (int i = 0; i < cycles(ns); ++i) {
            static_cast<Job*>(this)->cycle();
            REQUIRE(check.phase() != never);
            if (Job::read_now(check)) highest = std::max(highest, check.last_ratio());
        }
        return highest;
    }
    // Cycles until the check's phase is `p` (at most `limit`); the number taken, or -1.
    int until(typename Check::Phase p, int limit = 100000) {
        for (int i = 1; i <= limit; ++i) {
            static_cast<Job*>(this)->cycle();
            if (check.phase() == p) return i;
        }
        return -1;
    }
};

}  // namespace apshim::test
