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

TEST_CASE("held threads go in by their place, those on the job's CPUs first, then by slot", "[parking]") {
    // at_barrier's order (adapters/omp/parking.hpp: held_key): 1 + the rank of a thread's CPU among
    // the job's where its threads are bound, kHeld where that is not known.
    apshim::ThreadSlots<4> slots;
    static const int team = 0;
    apshim::ThreadCounters* c[4];
    for (auto*& p : c) {
        p = slots.claim();
        REQUIRE(p != nullptr);
        p->team.store(&team);
    }
    const auto before = [&](int i) { return apshim::teammates_now(slots, c[i]).held_before; };
    // Unranked, all kHeld: slot order.
    for (int i = 0; i < 4; ++i) c[i]->held_at_barrier.store(apshim::ThreadCounters::kHeld);
    CHECK(before(0) == 0);
    CHECK(before(3) == 3);
    // Ranked: slot 3 on the job's first CPU, slot 2 on its second, 0 and 1 on another job's.
    c[3]->held_at_barrier.store(1);
    c[2]->held_at_barrier.store(2);
    c[0]->held_at_barrier.store(1 + apshim::Host::kCpuUnplaced);
    c[1]->held_at_barrier.store(1 + apshim::Host::kCpuUnplaced);
    CHECK(before(3) == 0);
    CHECK(before(2) == 1);
    CHECK(before(0) == 2);
    CHECK(before(1) == 3);
    // One that is not held counts every held teammate ahead of it, and none of them counts it.
    c[2]->held_at_barrier.store(0);
    const apshim::Teammates m = apshim::teammates_now(slots, c[2]);
    CHECK(m.held_before == 3);
    CHECK(m.held == 3);
    CHECK(m.count == 3);
    CHECK(m.in_barrier == 0);  // the others are held
    CHECK(before(0) == 1);     // slot 2, no longer held, is no longer ahead of slot 0
    c[3]->held_at_barrier.store(0);
    CHECK(apshim::teammates_now(slots, c[2]).in_barrier == 1);
}
