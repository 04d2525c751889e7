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
