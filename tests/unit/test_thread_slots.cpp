// Per-thread counter slots (adapters/common/thread_slots.hpp): a thread that exits gives its
// slot back, the next thread reuses it and keeps adding to its totals, so the controller's
// per-slot differences (SlotSampler) stay right and never go negative.
#include <catch2/catch.hpp>

#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "adapters/common/slot_sampler.hpp"
#include "adapters/common/thread_slots.hpp"

using apshim::SlotSampler;
using apshim::ThreadCounters;
using apshim::ThreadSlots;

namespace {

// What a hook keeps per thread: its pointer to its slot.
thread_local ThreadCounters* t_slot = nullptr;

// On a new thread: claims a slot the way the hooks do, adds `busy` ticks, ends.
ThreadCounters* run_thread(ThreadSlots<4>& slots, std::uint64_t busy) {
    ThreadCounters* got = nullptr;
    std::thread([&] {
        t_slot = slots.claim(&t_slot);
        got = t_slot;
        if (t_slot) t_slot->busy_ns.store(t_slot->busy_ns.load() + busy);
    }).join();
    return got;
}

}  // namespace

TEST_CASE("a thread's slot is given back when it exits and reused with its totals", "[slots]") {
    static ThreadSlots<4> slots;
    ThreadCounters* first = run_thread(slots, 100);
    REQUIRE(first != nullptr);
    ThreadCounters* second = run_thread(slots, 50);
    CHECK(second == first);  // reused, not a new one
    CHECK(slots.used() == 1);
    CHECK(first->busy_ns.load() == 150);  // the next owner adds to the same total
    CHECK(first->owner.load() == nullptr);  // free again
    CHECK_FALSE(slots.overflowed());
}

TEST_CASE("thousands of threads one after another all get a slot", "[slots]") {
    static ThreadSlots<4> slots;
    int missing = 0;
    for (int i = 0; i < 2000; ++i)
        if (!run_thread(slots, 1)) ++missing;
    CHECK(missing == 0);
    CHECK(slots.used() == 1);
    CHECK_FALSE(slots.overflowed());
}

TEST_CASE("with all slots owned by live threads, the next thread gets none and it is noted", "[slots]") {
    static ThreadSlots<4> slots;
    std::atomic<int> claimed{0};
    std::atomic<bool> done{false};
    std::vector<std::thread> holders;
    for (int i = 0; i < 4; ++i)
        holders.emplace_back([&] {
            t_slot = slots.claim(&t_slot);
            if (t_slot) claimed.fetch_add(1);
            while (!done.load()) std::this_thread::yield();
        });
    while (claimed.load() < 4) std::this_thread::yield();
    CHECK(run_thread(slots, 1) == nullptr);
    CHECK(slots.overflowed());
    done.store(true);
    for (auto& h : holders) h.join();
    CHECK(run_thread(slots, 1) != nullptr);  // their slots came back
}

TEST_CASE("claims without an owner are never given back", "[slots]") {
    static ThreadSlots<4> slots;
    ThreadCounters* c = slots.claim();
    REQUIRE(c != nullptr);
    slots.release(c, nullptr);
    CHECK(slots.claim() != c);
}

TEST_CASE("an exiting thread's open busy interval is closed into its slot's total", "[slots]") {
    static ThreadSlots<4> slots;
    ThreadCounters* c = nullptr;
    std::thread([&] {
        t_slot = slots.claim(&t_slot);
        c = t_slot;
        t_slot->busy_since.store(apshim::now_ticks() - 1000);  // exits inside a task
    }).join();
    REQUIRE(c != nullptr);
    CHECK(c->busy_since.load() == 0);
    CHECK(c->busy_ns.load() >= 1000);
}

TEST_CASE("an unstamped busy interval reads busy and never adds time, whatever closes it", "[slots]") {
    // oneTBB's hooks where parking needs only the flags (adapters/tbb/tbb_state.hpp, stamping).
    using apshim::interval::kUnstamped;
    ThreadCounters c;
    c.busy_ns.store(5000);
    apshim::begin_busy(&c, kUnstamped);
    CHECK(c.busy_since.load() != 0);  // what parking's escape rules read
    CHECK(apshim::busy_until(c, apshim::now_ticks()) == 5000);
    apshim::end_busy(&c, apshim::now_ticks());  // stamps came on meanwhile
    CHECK(c.busy_since.load() == 0);
    CHECK(c.busy_ns.load() == 5000);
    apshim::begin_busy(&c, apshim::now_ticks() - 1000);  // and went off again
    apshim::end_busy(&c, kUnstamped);
    CHECK(c.busy_since.load() == 0);
    CHECK(c.busy_ns.load() == 5000);
    apshim::begin_busy(&c, apshim::now_ticks() - 1000);
    apshim::end_busy(&c, apshim::now_ticks());
    CHECK(c.busy_ns.load() >= 6000);
}

TEST_CASE("the controller's per-slot differences stay right across owners", "[slots]") {
    static ThreadSlots<4> slots;
    SlotSampler sampler;
    run_thread(slots, 1000000);
    std::uint64_t first = sampler.sample(slots, 0).busy_ns;
    CHECK(first > 0);
    CHECK(sampler.sample(slots, 0).busy_ns == 0);  // nothing new
    run_thread(slots, 1000000);                   // same slot, new owner
    std::uint64_t second = sampler.sample(slots, 0).busy_ns;
    CHECK(second > 0);
    CHECK(second < 2 * first);  // only the new owner's part, not the slot's whole total
}

TEST_CASE("after fork the forking thread's old slot is not given back twice", "[slots]") {
    static ThreadSlots<4> slots;
    std::atomic<ThreadCounters*> c{nullptr};
    // A thread that claimed before a "fork": the child forgets every slot (reset_after_fork)
    // while the thread's exit handler still names its old slot.
    std::atomic<bool> reset{false};
    std::thread holder([&] {
        t_slot = slots.claim(&t_slot);
        c.store(t_slot);
        while (!reset.load()) std::this_thread::yield();
    });
    while (!c.load()) std::this_thread::yield();
    slots.reset_after_fork();
    ThreadCounters* fresh = slots.claim();  // another thread now owns slot 0
    reset.store(true);
    holder.join();  // its exit must not free the slot it no longer owns
    CHECK(fresh == c.load());
    CHECK(slots.claim() != c.load());
}

TEST_CASE("timed, a thread in its share of a region with no interval open is measured by its CPU clock", "[slots]") {
    // NPB EP: its threads entered one long region of static loops before timing came on, and
    // no hook opens an interval there. Its CPU time must count, not read as idle.
    static ThreadSlots<4> slots;
    SlotSampler sampler;
    std::atomic<int> stage{0};
    std::thread worker([&] {
        t_slot = slots.claim(&t_slot);
        t_slot->engaged.store(1);  // in its share (region_started), untimed: busy_since stays 0
        stage.store(1);
        timespec start{}, now{};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
        do {
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
        } while ((now.tv_sec - start.tv_sec) * 1'000'000'000L + (now.tv_nsec - start.tv_nsec) < 50'000'000L);
        stage.store(2);
        while (stage.load() != 3) std::this_thread::yield();
    });
    while (stage.load() != 1) std::this_thread::yield();
    sampler.sample(slots, 0, /*timed=*/true);  // the baseline
    while (stage.load() != 2) std::this_thread::yield();
    std::uint64_t engaged_ns = sampler.sample(slots, 0, /*timed=*/true).busy_ns;
    CHECK(engaged_ns >= 40'000'000);  // at least most of the 50 ms of CPU it spun
    slots[0].engaged.store(0);         // at a barrier: not in its share, its clock is not work
    CHECK(sampler.sample(slots, 0, /*timed=*/true).busy_ns < 10'000'000);
    stage.store(3);
    worker.join();
}

namespace {

// A slot claimed for thread `t`, once it has published its id in `tid`, the way oneTBB's worker
// creation does (claim_for with its id and CPU clock, by the creating thread).
ThreadCounters* claim_for(ThreadSlots<4>& slots, std::thread& t, const std::atomic<int>& tid) {
    while (tid.load() == 0) std::this_thread::yield();
    clockid_t clock;
    REQUIRE(pthread_getcpuclockid(t.native_handle(), &clock) == 0);
    return slots.claim_for(tid.load(), clock);
}

// A thread created and ended without running a hook, its slot claimed for it.
ThreadCounters* claim_for_thread_that_ends(ThreadSlots<4>& slots) {
    std::atomic<int> tid{0};
    std::atomic<bool> claimed{false};
    std::thread t([&] {
        tid.store(static_cast<int>(syscall(SYS_gettid)));
        while (!claimed.load()) std::this_thread::yield();
    });
    ThreadCounters* c = claim_for(slots, t, tid);
    claimed.store(true);
    t.join();
    return c;
}

}  // namespace

TEST_CASE("a slot claimed for a thread that ends before adopting it is taken back", "[slots]") {
    // oneTBB ends and recreates its workers whenever its last application thread leaves; most of
    // them end before their first event. Their slots must not run out (tbb.thread_churn).
    static ThreadSlots<4> slots;
    SlotSampler sampler;
    for (int i = 0; i < 20; ++i) {
        ThreadCounters* c = claim_for_thread_that_ends(slots);
        REQUIRE(c != nullptr);
        // The controller notices the thread is gone. join() returns when the thread has cleared
        // its id, which the kernel does a moment before the thread's clock stops reading: cycles
        // go on until then (one failed look in a CI run).
        sampler.sample(slots, 0, /*timed=*/false);
        for (int k = 0; k < 1000 && c->tid.load() != 0; ++k) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
            sampler.sample(slots, 0, /*timed=*/false);
        }
        CHECK(c->tid.load() == 0);
        CHECK_FALSE(slots.adopt(c, &t_slot));  // free now: nobody adopts it
    }
    CHECK(slots.used() == 1);
    CHECK_FALSE(slots.overflowed());
    ThreadCounters* next = run_thread(slots, 1);
    CHECK(next == &slots[0]);  // reused by the next thread, which gives it back in turn
    CHECK(next->owner.load() == nullptr);
}

TEST_CASE("a slot claimed for a live thread is adopted, not taken back", "[slots]") {
    static ThreadSlots<4> slots;
    SlotSampler sampler;
    std::atomic<int> tid{0};
    std::atomic<ThreadCounters*> claimed{nullptr};
    std::atomic<bool> adopted{false}, sampled{false};
    std::thread t([&] {
        tid.store(static_cast<int>(syscall(SYS_gettid)));
        while (!sampled.load()) std::this_thread::yield();
        if (slots.adopt(claimed.load(), &t_slot)) {
            t_slot = claimed.load();
            adopted.store(true);
        }
    });
    ThreadCounters* c = claim_for(slots, t, tid);
    REQUIRE(c != nullptr);
    claimed.store(c);
    sampler.sample(slots, 0, /*timed=*/false);  // alive: its slot stays claimed for it
    CHECK(c->tid.load() == tid.load());
    sampled.store(true);
    t.join();
    CHECK(adopted.load());
    CHECK(c->owner.load() == nullptr);  // given back at its exit
    CHECK(run_thread(slots, 1) == c);
    CHECK(slots.used() == 1);
}

TEST_CASE("a slot claimed without an owner by a thread that ended is not taken back", "[slots]") {
    // What the controller saw of a slot whose thread was giving it back at exit, between
    // clearing its owner and its id: no owner, an id, no clock. Taking it back pushed it on the
    // free list a second time (its thread pushes it too).
    static ThreadSlots<4> slots;
    SlotSampler sampler;
    ThreadCounters* c = nullptr;
    int tid = 0;
    std::thread([&] {
        c = slots.claim();
        tid = static_cast<int>(syscall(SYS_gettid));
    }).join();
    REQUIRE(c != nullptr);
    for (int k = 0; k < 50; ++k) {
        sampler.sample(slots, 0, /*timed=*/false);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    CHECK(c->tid.load() == tid);  // left alone
    CHECK(slots.claim() != c);
}

TEST_CASE("slots given back while the controller samples are never held by two threads at once", "[slots]") {
    // Threads claim and exit (giving their slots back in their exit handlers) as fast as they
    // can while a controller thread samples without pause. Each thread marks its slot held while
    // it runs; a slot on the free list twice would be handed to two threads.
    static ThreadSlots<8> slots;
    static std::atomic<int> held[8];
    std::atomic<bool> stop{false};
    std::atomic<int> shared{0}, claims{0};
    std::thread controller([&] {
        SlotSampler sampler;
        while (!stop.load()) sampler.sample(slots, 0, /*timed=*/false);
    });
    auto churn = [&] {
        for (int i = 0; i < 400; ++i)
            std::thread([&] {
                t_slot = slots.claim(&t_slot);
                if (!t_slot) return;
                claims.fetch_add(1);
                int index = static_cast<int>(t_slot - &slots[0]);
                if (held[index].exchange(1) != 0) shared.fetch_add(1);
                std::this_thread::yield();
                held[index].store(0);
                t_slot->busy_since.store(apshim::now_ticks());  // exits inside a task: a longer exit path
            }).join();
    };
    std::vector<std::thread> churners;
    for (int j = 0; j < 4; ++j) churners.emplace_back(churn);
    for (auto& t : churners) t.join();
    stop.store(true);
    controller.join();
    CHECK(shared.load() == 0);
    CHECK(claims.load() == 1600);
    // Every slot is free now, each once on the list: as many distinct claims as slots used.
    std::vector<ThreadCounters*> got;
    for (ThreadCounters* c = slots.claim(); c && got.size() <= 8; c = slots.claim()) got.push_back(c);
    std::sort(got.begin(), got.end());
    CHECK(std::adjacent_find(got.begin(), got.end()) == got.end());
}
