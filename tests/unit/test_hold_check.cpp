// HoldCheck (shim/hold_check.hpp): when a job that only parking holds reads as not held.
#include <catch2/catch.hpp>

#include <cstdint>

#include "shim/hold_check.hpp"

using apshim::HoldCheck;

namespace {

constexpr std::uint64_t kMs = 1'000'000, kCycle = 5 * kMs;

// A job stepped every 5 ms cycle, using `cpus` processors; counts the CPU time reads.
struct Job {
    HoldCheck check;
    std::uint64_t now = 1000 * kMs, cpu = 0;
    int reads = 0;
    // Steps `cycles` cycles; true if any of them read unheld.
    bool run(int cycles, double cpus, int allotment, bool applies = true) {
        bool unheld = false;
        for (int i = 0; i < cycles; ++i) {
            now += kCycle;
            cpu += static_cast<std::uint64_t>(cpus * kCycle);
            unheld |= check.step(now, allotment, applies, [&] {
                ++reads;
                return cpu;
            });
        }
        return unheld;
    }
};

}  // namespace

TEST_CASE("hold check: a job parking holds reads held, one that keeps running reads unheld after a second", "[hold_check]") {
    Job held;
    CHECK_FALSE(held.run(1000, 1.2, 1));  // 5 s at 1.2 CPUs, allotment 1: within half a CPU
    Job unheld;
    CHECK_FALSE(unheld.run(200, 2.0, 1));  // the first window is still open after 1 s of cycles
    CHECK(unheld.run(1, 2.0, 1));          // and ends at the next: 2 CPUs at allotment 1
    CHECK(unheld.check.last_cpus() == Approx(2.0).epsilon(0.01));
    CHECK(unheld.check.last_allotment() == 1);
    CHECK(unheld.run(201, 2.0, 1));  // every window that reads so says so; the controller tells once
}

TEST_CASE("hold check: a window judges against the largest allotment it held", "[hold_check]") {
    Job job;
    job.run(100, 2.0, 2);                // half the window at allotment 2
    CHECK_FALSE(job.run(101, 2.0, 1));   // then 1: the window's 2 CPUs are its allotment's
    CHECK(job.check.last_allotment() == 2);
    CHECK(job.run(201, 2.0, 1));         // the next window held 1 throughout
}

TEST_CASE("hold check: a window restarts when parking stops being the only hold, and reads CPU only at its ends", "[hold_check]") {
    Job job;
    job.run(150, 2.0, 1);
    CHECK_FALSE(job.run(1, 2.0, 1, /*applies=*/false));  // confined again (or no longer throttled)
    CHECK_FALSE(job.run(199, 2.0, 1));                    // a new window from here: under a second so far
    CHECK(job.run(2, 2.0, 1));
    CHECK(job.reads == 3);  // the first window's start, the second's start and end
}
