// IdleCheck (shim/idle_check.hpp): when a job using the idle processors is probed without them,
// and what it takes to keep it to its own.
#include <catch2/catch.hpp>

#include <functional>
#include <vector>

#include "check_driver.hpp"
#include "shim/idle_check.hpp"

using apshim::IdleCheck;
using Phase = IdleCheck::Phase;

using namespace apshim::test;

namespace {

// Drives the check cycle by cycle: `with_rate` / `own_rate` progress marks per wall ms with the idle
// processors / on the job's own only.
struct Job : CheckDriver<Job, IdleCheck> {
    double with_rate, own_rate;
    bool with_idle = true;  // what the check said at the previous cycle
    // Whether the cycle ending at `now` was serial: no parallel work, no marks (none by default).
    std::function<bool(std::uint64_t)> serial = [](std::uint64_t) { return false; };
    // A phase's slow start: the rates are `start_factor` times as high in the first `start_ns` of
    // each parallel stretch (1: none).
    double start_factor = 1;
    std::uint64_t start_ns = 0, parallel_since = 0;
    Job(double w, double o) : with_rate(w), own_rate(o) {}
    // A probe ended at the cycle just made (highest_reading).
    static bool read_now(const IdleCheck& c) { return c.probe_ended(); }
    bool cycle(bool active = true) {
        now += kCycle;
        const bool in_serial = serial(now);
        if (in_serial) parallel_since = now;
        const double factor = now - parallel_since <= start_ns ? start_factor : 1.0;
        const std::uint64_t made = in_serial ? 0 : marks(factor * (with_idle ? with_rate : own_rate), kCycle / kMs);
        with_idle = check.step(now, made, active, 0, false, !in_serial);
        REQUIRE(with_idle == check.with_idle());
        return with_idle;
    }
};
}  // namespace

TEST_CASE("idle_check: nothing to decide, the idle processors are used", "[idle_check]") {
    Job job(1, 100);  // it would be far faster without them: but nothing is checked
    for (int i = 0; i < 10000; ++i) {
        REQUIRE(job.cycle(/*active=*/false));
        REQUIRE(job.check.phase() == Phase::off);
    }
}

TEST_CASE("idle_check: a job they help keeps them, probed less and less often", "[idle_check]") {
    Job job(20, 10);  // twice as far with them: a computing job
    REQUIRE(job.until(Phase::probe) == cycles(IdleCheck::kFirstProbeNs) + 1);  // a cycle to start, then the window
    // Probes after 0.2, 0.8, 3.2 s with them, then every 6.4 s: 30 ms of 6.4 s costs it about 0.5%.
    std::vector<int> starts{0};
    Phase before = Phase::probe;
    for (int i = 1; i < cycles(60'000'000'000); ++i) {
        job.cycle();
        REQUIRE(job.check.phase() != Phase::declined);
        if (job.check.probe_ended()) REQUIRE(job.check.last_ratio() == Approx(0.5).margin(0.05));
        if (job.check.phase() == Phase::probe && before != Phase::probe) starts.push_back(i);
        before = job.check.phase();
    }
    REQUIRE(starts.size() >= 10);
    int previous = cycles(4 * IdleCheck::kFirstProbeNs);  // the second probe comes 0.8 s after the first
    for (std::size_t k = 1; k < starts.size(); ++k) {
        int gap = starts[k] - starts[k - 1];
        REQUIRE(gap >= previous);  // never more often than the time before
        REQUIRE(gap <= cycles(apshim::kMaxProbeIntervalNs + IdleCheck::kProbeNs) + 1);
        previous = gap;
    }
}

TEST_CASE("idle_check: a job that gets further on its own is kept there, held longer each time", "[idle_check]") {
    Job job(10, 16);  // 1.6x as far without them (tesseract alone on 2 cores)
    REQUIRE(job.until(Phase::declined) > 0);
    REQUIRE(job.check.first_decline_now());
    REQUIRE_FALSE(job.check.with_idle());
    REQUIRE(job.check.last_ratio() == Approx(1.6).margin(0.1));
    // The first hold lasts kFirstHoldNs, then the job gets them back and is probed again.
    int held = 0;
    while (job.check.phase() == Phase::declined) {
        bool with_idle = job.cycle();
        REQUIRE(with_idle == (job.check.phase() != Phase::declined));
        ++held;
    }
    REQUIRE(held == cycles(apshim::kFirstHoldNs));
    REQUIRE(job.check.phase() == Phase::with_idle);
    REQUIRE(job.until(Phase::declined) > 0);
    REQUIRE_FALSE(job.check.first_decline_now());  // said once
    int second = 0;
    while (job.check.phase() == Phase::declined) {
        job.cycle();
        ++second;
    }
    REQUIRE(second == cycles(2 * apshim::kFirstHoldNs));
}

TEST_CASE("idle_check: alike with and without them, the job keeps them", "[idle_check]") {
    Job job(10, 10.5);  // 5% further without: noise, not a reason to leave CPUs idle
    for (int i = 0; i < cycles(60'000'000'000); ++i) {
        job.cycle();
        REQUIRE(job.check.phase() != Phase::declined);
    }
}

TEST_CASE("idle_check: too few marks to judge, the job keeps them", "[idle_check]") {
    SECTION("none at all (a serial phase, oneTBB)") {
        Job job(0, 0);
        for (int i = 0; i < cycles(60'000'000'000); ++i) {
            REQUIRE(job.cycle());
            REQUIRE(job.check.phase() == Phase::with_idle);  // never probed
        }
    }
    SECTION("a probe with fewer than kMinMarks") {
        Job job(1, 2);  // twice as far without them, but 60 marks in a 30 ms probe: too few to judge
        for (int i = 0; i < cycles(20'000'000'000); ++i) {
            job.cycle();
            REQUIRE(job.check.phase() != Phase::declined);
        }
    }
}

TEST_CASE("idle_check: a hold outlasts a pause, a window does not", "[idle_check]") {
    Job job(10, 20);
    REQUIRE(job.until(Phase::declined) > 0);
    // The confinement check takes over for a while (its probe): the hold goes on meanwhile.
    REQUIRE_FALSE(job.cycle(/*active=*/false));
    REQUIRE(job.check.phase() == Phase::declined);
    for (int i = 0; i < cycles(apshim::kFirstHoldNs); ++i) job.cycle(false);
    REQUIRE(job.check.phase() == Phase::off);
    REQUIRE(job.check.with_idle());
    // Active again: a fresh window, the first probe kFirstProbeNs later.
    REQUIRE(job.cycle());
    REQUIRE(job.check.phase() == Phase::with_idle);
    REQUIRE(job.until(Phase::probe) == cycles(IdleCheck::kFirstProbeNs));
}

TEST_CASE("idle_check: a probe is compared with the phase just before it", "[idle_check]") {
    // 3 s of a sparse phase (1 mark a ms), then a dense one (20 a ms); the idle processors change
    // neither. The probe at about 4.3 s follows 1.3 s of the dense phase: the whole window since the
    // last probe would read it 2.3x faster without them, its last 250-500 ms read it alike.
    Job job(1, 1);
    for (int i = 0; i < cycles(8'000'000'000); ++i) {
        if (job.now >= 3'000'000'000) job.with_rate = job.own_rate = 20;
        job.cycle();
        REQUIRE(job.check.phase() != Phase::declined);
        if (job.check.probe_ended()) REQUIRE(job.check.last_ratio() == Approx(1).margin(0.1));
    }
}

TEST_CASE("idle_check: a probe counts what its window counted", "[idle_check]") {
    // Region ends alike with and without the idle processors (2 a ms); marks (5 a ms) counted only
    // in the probe, where the allotment fell below the team: no gain, the job keeps them.
    auto run = [](bool counted_with, double marks_with, double marks_without) {
        IdleCheck check;
        std::uint64_t now = 0;
        bool with_idle = true;
        int declined = 0;
        for (int i = 0; i < cycles(20'000'000'000); ++i) {
            now += kCycle;
            const bool counted = with_idle ? counted_with : true;
            const double per_ms = with_idle ? marks_with : marks_without;
            with_idle = check.step(now, 2 * kCycle / kMs, true, counted ? static_cast<std::uint64_t>(per_ms * kCycle / kMs) : 0,
                                   counted);
            declined += check.phase() == Phase::declined;
        }
        return declined;
    };
    REQUIRE(run(/*counted_with=*/false, 5, 5) == 0);
    // Counted in both: a gain in marks without them declines them; the same marks alike do not.
    REQUIRE(run(true, 5, 15) > 0);
    REQUIRE(run(true, 5, 5) == 0);
}

TEST_CASE("idle_check: a serial stretch is no part of a reference", "[idle_check]") {
    // Phases of short regions (twice as far with the idle processors) between serial stretches,
    // 200 ms and 500 ms in turn: FastTree's shape. A window through a stretch read a probe at the
    // next phase's start 1.75x "further without them" (its rate diluted by the stretch): declined.
    Job job(20, 10);
    job.serial = [](std::uint64_t now) { return now % 700'000'000 >= 200'000'000; };
    const double highest = job.highest_reading(Phase::declined, 30'000'000'000);
    REQUIRE(highest > 0);                        // probed all the same
    REQUIRE(highest < IdleCheck::kDeclineRatio);  // and never read further without them
}

TEST_CASE("idle_check: after a serial stretch, a reference spans kMinReferenceNs", "[idle_check]") {
    // Phases of 300 ms between serial stretches of 400 ms, each phase's first 30 ms a tenth as fast
    // (threads waking, caches cold), a job the idle processors help (1.25x). A reference of the
    // phase's first few cycles read a probe just after them several times further without them.
    Job job(12.5, 10);
    job.serial = [](std::uint64_t now) { return now % 700'000'000 >= 300'000'000; };
    job.start_factor = 0.1;
    job.start_ns = 30'000'000;
    const double highest = job.highest_reading(Phase::declined, 30'000'000'000);
    REQUIRE(highest > 0);
    REQUIRE(highest < IdleCheck::kDeclineRatio);
}

TEST_CASE("idle_check: a job further on its own is declined them between serial stretches too", "[idle_check]") {
    // 400 ms of tesseract's shape (1.6x as far without them), 100 ms serial, in turn.
    Job job(10, 16);
    job.serial = [](std::uint64_t now) { return now % 500'000'000 >= 400'000'000; };
    REQUIRE(job.until(Phase::declined, cycles(10'000'000'000)) > 0);
}
