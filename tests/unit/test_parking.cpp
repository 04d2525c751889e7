// The parking primitive's bounds (adapters/common/park.hpp) and the CPU readings parked threads
// share (adapters/common/busy.hpp, SharedCpuTotal): a lot of many parked threads polls about as
// often in all as a lot of few, at every wait; a reading being written is no reason to wait; a
// reading that admits one more thread lets one go.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <thread>

#include "adapters/common/busy.hpp"
#include "adapters/common/park.hpp"
#include "adapters/common/thread_slots.hpp"

using apshim::ParkBounds;
using apshim::ParkingLot;
using apshim::SharedCpuTotal;

namespace {

constexpr std::uint64_t kMs = 1000000;

// A reading stopped half-way, as a writer preempted between its two counts leaves it.
struct HalfWritten : SharedCpuTotal {
    void begin() { seq_.fetch_add(1); }
    void end() { seq_.fetch_add(1); }
};

}  // namespace

TEST_CASE("each wait's length follows the parked count at that wait", "[parking]") {
    const ParkBounds shared{kMs, 1000, 0, 8};
    CHECK(apshim::wait_ns(shared, 0) == kMs);
    CHECK(apshim::wait_ns(shared, 15) == kMs);
    CHECK(apshim::wait_ns(shared, 800) == 100 * kMs);
    CHECK(apshim::wait_ns(ParkBounds{kMs, 1000, 0}, 800) == kMs);  // every thread polls at recheck_ns

    // A thread that parked first, alone, and is still in the lot when 800 others are: its waits
    // grow with them (at a millisecond each, 50 ms would be about 50 questions).
    ParkingLot lot;
    std::atomic<int> parked{800};
    int asked = 0;
    apshim::park_until(lot, parked, ParkBounds{kMs, 1000, 50 * kMs, 8}, [&] {
        ++asked;
        return false;
    });
    CHECK(asked <= 3);
    CHECK(parked.load() == 800);
}

TEST_CASE("a reading being written is no answer, and never a wait", "[parking]") {
    apshim::ThreadSlots<4> slots;
    HalfWritten total;
    total.read(slots, 10 * kMs, 0);
    total.read(slots, 20 * kMs, 0);
    CHECK(total.read(slots, 20 * kMs, kMs).cpus() >= 0);

    total.begin();
    std::atomic<bool> answered{false};
    double cpus = 0;
    std::thread reader([&] {
        cpus = total.read(slots, 40 * kMs, 0).cpus();
        answered = true;
    });
    for (int i = 0; i < 100 && !answered; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    const bool without_waiting = answered;
    total.end();  // lets a reader that waits for the writer go, so the test ends either way
    reader.join();
    CHECK(without_waiting);
    CHECK(cpus < 0);
}

TEST_CASE("a reading that admits one more thread lets one go", "[parking]") {
    apshim::ThreadSlots<4> slots;
    SharedCpuTotal total;
    total.read(slots, 10 * kMs, 0);
    const SharedCpuTotal::Window w = total.read(slots, 20 * kMs, 0);
    CHECK(total.first_for(w));
    CHECK_FALSE(total.first_for(w));
    CHECK_FALSE(total.first_for(total.read(slots, 20 * kMs + 1, kMs)));  // still that reading
    CHECK(total.first_for(total.read(slots, 30 * kMs, kMs)));             // a new one
}

TEST_CASE("a thread let go keeps going while the owners use no more than their limit by half a processor", "[parking]") {
    // adapters/tbb/task_hooks.cpp, keep_going: the readings' times are given, the owners' CPU is real.
    apshim::ThreadSlots<4> slots;
    REQUIRE(slots.claim() != nullptr);  // this thread owns a slot: its CPU clock is read
    SharedCpuTotal total;
    CHECK_FALSE(total.within(slots, 10 * kMs, 0, 1));  // one reading: no window yet, no answer
    // 3 ms of this thread's CPU in a window of 1 ms: 3 processors' worth.
    const auto cpu_now = [] {
        timespec ts;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
    };
    for (const std::uint64_t start = cpu_now(); cpu_now() - start < 3 * kMs;) {
    }
    CHECK_FALSE(total.within(slots, 11 * kMs, 0, 1));  // 3 and more > 1.5
    CHECK(total.within(slots, 11 * kMs, kMs, 4));      // the same window (not due again): <= 4.5
    CHECK(total.within(slots, 100 * kMs, 0, 1));       // idle since: about 0
}
