// ConfineCheck (shim/confine_check.hpp): when a confined job is probed unconfined, and what it
// takes to leave it unconfined.
#include <catch2/catch.hpp>

#include <vector>

#include "check_driver.hpp"
#include "shim/confine_check.hpp"

using apshim::ConfineCheck;
using Phase = ConfineCheck::Phase;

using namespace apshim::test;

namespace {
constexpr std::uint64_t kConfirmNs = ConfineCheck::kConfirmCycles * kCycle;

// Drives the check cycle by cycle: `confined_rate` / `free_rate` progress marks per CPU-ms while
// confined / unconfined (1 CPU-ms per ms confined, `cpus` unconfined: a thread on each CPU).
struct Job : CheckDriver<Job, ConfineCheck> {
    double confined_rate, free_rate;
    int cpus;
    bool confined = false;  // what the check said at the previous cycle
    Job(double c, double f, int n = 2) : confined_rate(c), free_rate(f), cpus(n) {}
    bool cycle(bool confinable = true) {
        now += kCycle;
        bool ran_confined = confined;
        std::uint64_t cpu = (ran_confined ? 1 : cpus) * kCycle;
        double rate = ran_confined ? confined_rate : free_rate;
        confined = check.step(now, marks(rate, static_cast<double>(cpu) / kMs), cpu, ran_confined ? 1 : 0, confinable) &&
                   confinable;
        return confined;
    }
};

// A job hand-over bound until its confirmation, whose cycles (confined first, then in turn) make
// `marks[i]` and use `cpu(i, marks[i])` ns of CPU each: the phase it is left in.
template <class CpuOf>
Phase confirmed(const std::uint64_t (&marks)[ConfineCheck::kConfirmCycles], CpuOf cpu) {
    Job job(0.5, 10);
    REQUIRE(job.until(Phase::confirm) > 0);
    for (int i = 0; i < ConfineCheck::kConfirmCycles; ++i) {
        job.now += kCycle;
        bool unconfined = i % 2 == 1;
        job.check.step(job.now, marks[i], cpu(i, marks[i]), unconfined ? 0 : 1, true);
    }
    return job.check.phase();
}
}  // namespace

TEST_CASE("confine_check: nothing to confine, nothing to check", "[confine_check]") {
    Job job(10, 100);
    for (int i = 0; i < 1000; ++i) {
        REQUIRE(job.cycle(/*confinable=*/false) == false);  // (the Job confines only what is confinable)
        REQUIRE(job.check.phase() == Phase::idle);
        REQUIRE_FALSE(job.check.suspends());
    }
}

TEST_CASE("confine_check: a job's start runs unconfined, once", "[confine_check]") {
    Job job(10, 11);
    // The first kStartNs with fewer processors than threads: not throttled at all (a probe), then
    // confined.
    int start_cycles = 0;
    while (!job.cycle()) {
        REQUIRE(job.check.starting());
        REQUIRE(job.check.suspends());
        ++start_cycles;
    }
    REQUIRE(start_cycles * kCycle >= ConfineCheck::kStartNs);
    REQUIRE(start_cycles * kCycle <= ConfineCheck::kStartNs + kCycle);
    REQUIRE(job.check.phase() == Phase::confined);
    // Compared with the first 50 ms confined: the same progress per CPU-second, stays confined.
    for (int i = 0; i < 20; ++i) REQUIRE(job.cycle());
    REQUIRE(job.check.last_ratio() > 0.9);
    REQUIRE(job.check.last_ratio() < 1.2);
    // Not throttled for a while, then throttled again: confined at once (the start is once per job).
    job.cycle(/*confinable=*/false);
    REQUIRE(job.cycle());
    REQUIRE(job.check.phase() == Phase::confined);
}

TEST_CASE("confine_check: a hand-over-bound job is found by its start, without a probe", "[confine_check]") {
    Job job(0.1, 50);  // NPB LU.S built with gcc: 0.01 s natively, 0.26 s confined until a probe
    int cycles = 0;
    for (; cycles < 100 && job.check.phase() != Phase::hold; ++cycles) {
        job.cycle();
        REQUIRE(job.check.phase() != Phase::probe);
    }
    REQUIRE(job.check.phase() == Phase::hold);
    REQUIRE(job.check.first_hold_started());
    // 100 ms start + 50 ms confined (+ the cycle that ended the start and the one that found it),
    // then the confirmation.
    REQUIRE(cycles * kCycle <= ConfineCheck::kStartNs + ConfineCheck::kFirstCompareNs + kConfirmNs + 2 * kCycle);
}

TEST_CASE("confine_check: a start without progress leaves the job to its first probe", "[confine_check]") {
    // Serial set-up in the start (CPU, no marks): nothing to compare, no hold from it; the probe
    // after kFirstProbeNs confined finds the job hand-over bound.
    ConfineCheck check;
    std::uint64_t now = 0;
    bool confined = false;
    int cycles = 0;
    for (; cycles < 200 && check.phase() != Phase::hold; ++cycles) {
        now += kCycle;
        bool was_start = check.phase() == Phase::idle || check.starting();
        std::uint64_t marks = was_start ? 0 : confined ? 1 : 500;
        confined = check.step(now, marks, confined ? kCycle : 2 * kCycle, confined ? 1 : 0, true);
    }
    REQUIRE(check.phase() == Phase::hold);
    REQUIRE(cycles * kCycle >= ConfineCheck::kStartNs + ConfineCheck::kFirstProbeNs);
    REQUIRE(cycles * kCycle <=
            ConfineCheck::kStartNs + ConfineCheck::kFirstProbeNs + ConfineCheck::kProbeNs + kConfirmNs + 3 * kCycle);
}

TEST_CASE("confine_check: a start spent in a construct with sparse marks ends early", "[confine_check]") {
    // 10 ms of serial decoding, then one long region on all the job's CPUs, on 2 to 16 CPUs:
    // NPB EP (static loops, no marks) and GraphicsMagick's blur (a guided chunk now and then).
    // The stretch of construct begins at its first cycle end (15 ms); with marks it ends the
    // start after kSparseStartNs, or once it has used as much CPU beyond one CPU's worth,
    // without any once it has used kQuietStartSurplusNs beyond it: no later than a cycle after
    // its first on wide machines.
    struct Shape {
        const char* what;
        int cpus;
        std::uint64_t mark_every_ns;  // 0: none
        std::uint64_t ends_ns;
    };
    const Shape shapes[] = {
        {"no marks, 2 CPUs", 2, 0, 15'000'000 + ConfineCheck::kQuietStartSurplusNs},
        {"a mark every 20 ms, 2 CPUs", 2, 20'000'000, 15'000'000 + ConfineCheck::kSparseStartNs},
        {"no marks, 5 CPUs", 5, 0, 15'000'000 + ConfineCheck::kSparseStartNs},
        {"a mark every 20 ms, 4 CPUs", 4, 20'000'000, 15'000'000 + kCycle},
        {"no marks, 16 CPUs", 16, 0, 15'000'000 + kCycle},
        {"a mark every 5 ms, 16 CPUs", 16, kCycle, 15'000'000 + kCycle},
    };
    for (const Shape& shape : shapes) {
        INFO(shape.what);
        ConfineCheck check;
        std::uint64_t now = 0;
        bool confined = false;
        for (int cycles = 0; cycles < 40 && !confined; ++cycles) {
            now += kCycle;
            bool in_construct = now > 10'000'000;
            std::uint64_t marks = in_construct && shape.mark_every_ns && now % shape.mark_every_ns == 0 ? 1 : 0;
            confined = check.step(now, marks, in_construct ? shape.cpus * kCycle : kCycle, 0, true, true, in_construct);
            if (!confined && cycles > 0) REQUIRE(check.starting());
        }
        REQUIRE(confined);
        REQUIRE(check.phase() == Phase::confined);
        REQUIRE(now == shape.ends_ns);
    }
}

TEST_CASE("confine_check: a start with dense marks, or in serial code, runs its whole length", "[confine_check]") {
    // Marks at one per kSparseMarkCpuNs of CPU or more keep the start going (NPB LU.W, hand-over
    // bound, makes a hundred times as many), as does serial code (it uses one CPU: the start
    // costs the co-runner nothing there), and a construct left and entered again starts its
    // stretch anew: regions of 35 ms without marks, each short of kQuietStartSurplusNs.
    struct Shape {
        const char* what;
        bool (*in_construct)(std::uint64_t now);
        std::uint64_t (*marks)(std::uint64_t now);
    };
    const Shape shapes[] = {
        {"a mark per 10 ms of CPU", [](std::uint64_t) { return true; },
         [](std::uint64_t) -> std::uint64_t { return 1; }},
        {"500 marks per 10 ms of CPU", [](std::uint64_t) { return true; },
         [](std::uint64_t) -> std::uint64_t { return 500; }},
        {"serial set-up", [](std::uint64_t) { return false; }, [](std::uint64_t) -> std::uint64_t { return 0; }},
        {"regions of 35 ms with 5 ms between, no marks", [](std::uint64_t now) { return now % 40'000'000 != 0; },
         [](std::uint64_t) -> std::uint64_t { return 0; }},
    };
    for (const Shape& shape : shapes) {
        INFO(shape.what);
        ConfineCheck check;
        std::uint64_t now = 0;
        int start_cycles = 0;
        for (bool confined = false; !confined && start_cycles < 100;) {
            now += kCycle;
            confined = check.step(now, shape.marks(now), 2 * kCycle, 0, true, true, shape.in_construct(now));
            if (!confined) ++start_cycles;
        }
        REQUIRE(now >= ConfineCheck::kStartNs);
        REQUIRE(now <= ConfineCheck::kStartNs + kCycle);
    }
}

TEST_CASE("confine_check: a compute-bound job stays confined, probed ever more rarely", "[confine_check]") {
    Job job(10, 11);  // the same progress per CPU-second either way (10% from context switches)
    int probes = 0, unconfined = 0;
    Phase last = Phase::idle;
    for (int i = 0; i < 20000; ++i) {  // 100 s
        if (!job.cycle()) ++unconfined;
        if (job.check.phase() == Phase::probe && last != Phase::probe) ++probes;
        REQUIRE(job.check.phase() != Phase::hold);
        last = job.check.phase();
    }
    // Probes after 0.25, 1, 4 s of confinement, then every 6.4 s: about 17 in 100 s, 15 ms each
    // (3 cycles): under 1% of the time unconfined.
    REQUIRE(probes >= 12);
    REQUIRE(probes <= 20);
    REQUIRE(unconfined <= 20000 / 100);
    REQUIRE(job.check.last_ratio() < 1.2);
}

TEST_CASE("confine_check: a probe far from hand-over bound costs what it costs on 2 CPUs", "[confine_check]") {
    // Each probe's cycles: three (kProbeNs) on 2 CPUs; one on 16, where a compute-bound job's
    // probe has marks enough and has used kProbeNs beyond its confined CPU within a cycle. A
    // reading near the ratio (2x) runs its whole length on 16 CPUs too.
    struct Shape {
        const char* what;
        int cpus;
        double confined_rate, free_rate;
        int probe_cycles;
    };
    const Shape shapes[] = {
        {"compute-bound, 2 CPUs", 2, 10, 11, cycles(ConfineCheck::kProbeNs)},
        {"compute-bound, 16 CPUs", 16, 10, 11, 1},
        {"sparse marks, 16 CPUs", 16, 0.5, 0.5, 1},
        {"twice as far unconfined, 16 CPUs", 16, 10, 20, cycles(ConfineCheck::kProbeNs)},
    };
    for (const Shape& shape : shapes) {
        INFO(shape.what);
        Job job(shape.confined_rate, shape.free_rate, shape.cpus);
        int probes = 0, run = 0;
        for (int i = 0; i < 2000; ++i) {  // 10 s: probes after 0.25, 1 and 4 s confined
            job.cycle();
            if (job.check.phase() == Phase::probe) {
                ++run;
            } else if (run > 0) {
                REQUIRE(run == shape.probe_cycles);
                ++probes;
                run = 0;
            }
            REQUIRE(job.check.phase() != Phase::hold);
            REQUIRE(job.check.phase() != Phase::confirm);
        }
        REQUIRE(probes == 3);
    }
}

TEST_CASE("confine_check: a hand-over-bound job on 16 CPUs is found as on 2", "[confine_check]") {
    Job job(0.1, 50, 16);  // its start has marks enough: compared at its end, no probe
    REQUIRE(job.until(Phase::hold) * kCycle <=
            ConfineCheck::kStartNs + ConfineCheck::kFirstCompareNs + kConfirmNs + 2 * kCycle);
    // Its next probe, after the hold, reads it at once again.
    REQUIRE(job.until(Phase::confined) > 0);
    REQUIRE(job.until(Phase::hold) > 0);
    REQUIRE(job.check.last_ratio() > 100);
}

TEST_CASE("confine_check: a hand-over-bound job is left unconfined, then measured again", "[confine_check]") {
    Job job(0.1, 50);  // 500x as far per CPU-second unconfined (NPB LU built with gcc)
    int first = job.until(Phase::hold);
    REQUIRE(first > 0);
    REQUIRE(first * kCycle <= ConfineCheck::kStartNs + ConfineCheck::kFirstCompareNs + kConfirmNs + 2 * kCycle);  // by the start
    REQUIRE(job.check.first_hold_started());
    REQUIRE(job.check.last_ratio() > 100);
    // Held unconfined for 1 s, then confined again and probed again: found again, held 2 s.
    int held = job.until(Phase::confined);
    REQUIRE(held * kCycle >= 1000 * kMs);
    REQUIRE(held * kCycle <= 1010 * kMs);
    REQUIRE(job.until(Phase::hold) > 0);
    REQUIRE_FALSE(job.check.first_hold_started());  // said once, not every time
    held = job.until(Phase::confined);
    REQUIRE(held * kCycle >= 2000 * kMs);
}

TEST_CASE("confine_check: a job without progress marks is never probed", "[confine_check]") {
    Job job(0, 0);  // one long region measured by CPU clocks: the hooks count nothing
    while (!job.cycle()) REQUIRE(job.check.starting());  // the start (above)
    for (int i = 0; i < 2000; ++i) REQUIRE(job.cycle());
    REQUIRE(job.check.phase() == Phase::confined);
}

TEST_CASE("confine_check: a job whose runtimes count no marks gets no start", "[confine_check]") {
    // oneTBB alone: its start could never be compared, so it would only keep its co-runners' CPUs.
    ConfineCheck check;
    REQUIRE(check.step(kCycle, 0, 2 * kCycle, 0, /*confinable=*/true, /*markable=*/false));
    REQUIRE(check.phase() == Phase::confined);
    REQUIRE_FALSE(check.suspends());
    for (int i = 2; i < 2000; ++i) REQUIRE(check.step(i * kCycle, 0, kCycle, 1, true, false));
    REQUIRE(check.phase() == Phase::confined);
}

TEST_CASE("confine_check: a probe with too few marks proves nothing", "[confine_check]") {
    // 0.05 marks per CPU-ms confined, 0.1 free: a probe of 30 ms on 2 CPUs sees 6 (< 8).
    Job job(0.05, 0.1);
    for (int i = 0; i < 4000; ++i) job.cycle();
    REQUIRE(job.check.phase() != Phase::hold);
}

TEST_CASE("confine_check: just below and just above the ratio", "[confine_check]") {
    Job below(10, 29);
    for (int i = 0; i < 4000; ++i) below.cycle();
    REQUIRE(below.check.phase() != Phase::hold);
    REQUIRE(below.check.last_ratio() < ConfineCheck::kRatio);
    Job above(10, 31);
    REQUIRE(above.until(Phase::hold, 4000) > 0);
}

TEST_CASE("confine_check: an allotment that covers the job ends the hold", "[confine_check]") {
    Job job(0.1, 50);
    REQUIRE(job.until(Phase::hold) > 0);
    job.cycle(/*confinable=*/false);
    REQUIRE_FALSE(job.check.suspends());
    REQUIRE(job.check.phase() == Phase::idle);
    REQUIRE(job.cycle());  // throttled again: confined, a fresh window
    REQUIRE(job.check.phase() == Phase::confined);
}

TEST_CASE("confine_check: a job that leaves its confined CPU mostly idle is not short of it", "[confine_check]") {
    // Tasks that sleep: 0.2 CPU-ms per 5 ms cycle confined, any ratio.
    ConfineCheck check;
    std::uint64_t now = 0;
    bool confined = false;
    for (int i = 0; i < 4000; ++i) {
        now += kCycle;
        std::uint64_t cpu = kCycle / 5;
        std::uint64_t marks = confined ? 1 : 50;
        confined = check.step(now, marks, cpu, confined ? 1 : 0, true);
        REQUIRE(check.phase() != Phase::hold);
    }
    REQUIRE(check.last_ratio() > ConfineCheck::kRatio);  // it would have been, by marks alone
}

TEST_CASE("confine_check: serial code before the first mark is no reference", "[confine_check]") {
    // cdo: 1.4 s of set-up that makes no marks, then a phase of tiny regions, 60 marks per CPU-ms
    // confined and 55 unconfined (compute-bound: the same either way). Counted from the start of
    // confinement, the set-up's CPU time diluted the confined rate, and the first probe, meeting
    // the regions, read 200x and held the job unconfined.
    auto run = [](int serial_cycles, double confined_rate, double free_rate) {
        ConfineCheck check;
        std::uint64_t now = 0;
        bool confined = false;
        for (int i = 0; i < 2000; ++i) {
            now += kCycle;
            std::uint64_t cpu = (confined ? 1 : 2) * kCycle;
            bool marking = i >= serial_cycles;
            auto marks = static_cast<std::uint64_t>(marking ? (confined ? confined_rate : free_rate) * static_cast<double>(cpu) / kMs : 0);
            confined = check.step(now, marks, cpu, confined ? 1 : 0, true);
            if (check.phase() == Phase::hold) return true;
        }
        return false;
    };
    REQUIRE_FALSE(run(280, 60, 55));  // held before: the probe after 250 ms confined met the first regions
    REQUIRE_FALSE(run(1, 60, 55));
    // A hand-over-bound phase after the same set-up is still found (by the first probe 250 ms into it).
    REQUIRE(run(280, 0.5, 50));
}

TEST_CASE("confine_check: the window begins at its first mark", "[confine_check]") {
    // 1 s confined without marks, then marks: the first probe comes kFirstProbeNs after them.
    ConfineCheck check;
    std::uint64_t now = 0;
    bool confined = false;
    int first_probe = -1;
    for (int i = 0; i < 1000 && first_probe < 0; ++i) {
        now += kCycle;
        std::uint64_t cpu = (confined ? 1 : 2) * kCycle;
        std::uint64_t marks = i >= 200 ? 10 : 0;
        confined = check.step(now, marks, cpu, confined ? 1 : 0, true);
        if (check.phase() == Phase::probe) first_probe = i;
    }
    REQUIRE(first_probe * kCycle >= 200 * kCycle + ConfineCheck::kFirstProbeNs - kCycle);
    REQUIRE(first_probe * kCycle <= 200 * kCycle + ConfineCheck::kFirstProbeNs + kCycle);
}

namespace {
// Drives a fresh check for `cycles` cycles of a job that makes `confined_rate` / `free_rate` marks
// per CPU-ms, confined / not, in the cycles `marking(ms)` says (ms since its start) and none in the
// others; `seen(check)` after each step. Returns whether the job was held unconfined.
template <class Marking, class Seen>
bool held(double confined_rate, double free_rate, int cycles, Marking marking, Seen seen) {
    ConfineCheck check;
    std::uint64_t now = 0;
    bool confined = false;
    for (int i = 0; i < cycles; ++i) {
        now += kCycle;
        std::uint64_t cpu = (confined ? 1 : 2) * kCycle;
        double rate = confined ? confined_rate : free_rate;
        auto marks = static_cast<std::uint64_t>(marking(i * 5) ? rate * static_cast<double>(cpu) / kMs : 0);
        confined = check.step(now, marks, cpu, confined ? 1 : 0, true);
        seen(check);
        if (check.phase() == Phase::hold) return true;
    }
    return false;
}
}  // namespace

TEST_CASE("confine_check: a probe is compared with the phase just before it", "[confine_check]") {
    // RawTherapee: seconds of long regions of static loops (CPU, no marks), then a phase of marks,
    // 60 per CPU-ms confined and 55 unconfined (compute-bound). Compared with the whole window
    // (mostly the markless phase), a probe in the marking phase read 6x and held the job unconfined.
    auto marking = [](int ms) { return ms % 6000 >= 4500; };  // 4.5 s without marks, then 1.5 s with, over and over
    int compared = 0;
    auto count = [&](const ConfineCheck& c) { compared += c.probe_ended() && c.last_ratio() > 0; };
    REQUIRE_FALSE(held(60, 55, 16000, marking, count));  // 80 s
    REQUIRE(compared >= 2);  // probes met the marking phase, and were judged
    // A hand-over-bound marking phase in the same pattern is still found.
    REQUIRE(held(0.5, 50, 16000, marking, count));
}

TEST_CASE("confine_check: a burst of marks that a probe meets is no hand-over, confirmed or not", "[confine_check]") {
    // enfuse's shape: long regions of static loops (CPU, no marks) and bursts of marks between
    // them, 20 ms every 400 ms here, as many per CPU-second confined as not. A probe or the start
    // that meets a burst reads several times the progress of the window before it; the
    // confirmation's cycles, confined and not in turn, read alike.
    int suspect = 0;
    auto count = [&](const ConfineCheck& c) { suspect += c.phase() == Phase::confirm; };
    REQUIRE_FALSE(held(3, 3, 12000, [](int ms) { return ms % 400 >= 380; }, count));  // 60 s
    REQUIRE(suspect > 0);  // comparisons one after the other read it hand-over bound
    // A job whose marking phases are hand-over bound and most of its time is still held.
    REQUIRE(held(0.5, 10, 12000, [](int ms) { return ms % 400 >= 80; }, count));
}

TEST_CASE("confine_check: a burst within one cycle of the confirmation is no hand-over", "[confine_check]") {
    // enfuse in a CI run at 3bba3a6: a probe met a burst, and so did the confirmation, all of it in
    // its second cycle (unconfined: 57 marks); serial code followed (one thread, a mark now and
    // then). Pooled whole, its unconfined cycles made 4.2x the marks per CPU-second of the
    // confined ones, and the job was held unconfined. Without each kind's top cycle: 2 against 4.
    auto confirm = [](const std::uint64_t (&marks)[ConfineCheck::kConfirmCycles], std::uint64_t burst_cpu) {
        return confirmed(marks, [&](int i, std::uint64_t m) { return i % 2 == 1 && m > 20 ? burst_cpu : kCycle; });
    };
    const std::uint64_t enfuse[ConfineCheck::kConfirmCycles] = {3, 57, 0, 0, 0, 0, 1, 2, 10, 0, 0, 0, 0, 0, 0, 0};
    CHECK(confirm(enfuse, 2 * kCycle) != Phase::hold);
    // Hand-overs in every unconfined cycle, next to none confined: held, the top cycles left out.
    const std::uint64_t handover[ConfineCheck::kConfirmCycles] = {1, 57, 0, 40, 1, 50, 0, 45, 2, 60, 0, 38, 1, 52, 0, 41};
    CHECK(confirm(handover, 2 * kCycle) == Phase::hold);
}

TEST_CASE("confine_check: a burst over a few cycles of the confirmation is no hand-over", "[confine_check]") {
    // enfuse probed every 50 ms (seventy-third session): its bursts of region ends last 2-4 cycles
    // and are hand-over bound while they last (8 marks confined, 57 unconfined), between regions
    // of static loops that make no marks either way. Less each kind's top cycle, the confirmations
    // that met one still read 5-10x, and 14 of 47 held the job for a second. Their unconfined
    // cycles made marks in 2-4 of 8 (these are four of them, cycle by cycle).
    auto confirm = [](const std::uint64_t (&marks)[ConfineCheck::kConfirmCycles]) {
        return confirmed(marks, [](int i, std::uint64_t) { return i % 2 == 1 ? 3 * kCycle / 2 : kCycle; });
    };
    const std::uint64_t bursts[][ConfineCheck::kConfirmCycles] = {
        {8, 57, 0, 0, 1, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
        {0, 3, 9, 57, 0, 0, 2, 11, 0, 0, 0, 0, 0, 0, 0, 0},
        {0, 12, 13, 11, 0, 0, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0},
        {8, 60, 11, 70, 0, 0, 5, 8, 0, 0, 0, 0, 0, 0, 0, 0},
    };
    for (const auto& marks : bursts) CHECK(confirm(marks) != Phase::hold);
    // Marks in six of the eight unconfined cycles, next to none confined: held.
    const std::uint64_t handover[ConfineCheck::kConfirmCycles] = {1, 30, 0, 25, 0, 0, 1, 28, 0, 31, 0, 0, 0, 26, 0, 27};
    CHECK(confirm(handover) == Phase::hold);
}

namespace {
// NPB LU built with gcc, throttled: each iteration is a pipelined sweep whose threads hand work to
// each other through flags they spin on (no runtime call: no marks; confined to one CPU, the
// waiter holds it until the kernel's tick, `confined_sweep_rate` as fast) and then loops with
// barriers that compute (marks; the same per CPU-ms either way), all in one parallel construct.
// Confined and unconfined cycles in turn (the confirmation) read alike: the sweeps stalled in the
// confined cycles go on in the unconfined ones. Simulated in 0.1 ms steps; returns the wall ms
// taken for `iterations` (unconfined, one takes sweep_ms + loops_ms). `in_construct`: what the
// check is told of the threads (false: as if they ran serial code between marks).
struct LuLike {
    double sweep_ms = 3, loops_ms = 3, loop_marks = 17, confined_sweep_rate = 0.05;
    bool in_construct = true;
};
// tests/omp/omp_sweeps.c's shape: sweeps of `sweep_ms` unconfined, a hundred times as long
// confined, then 2 ms of loops making 68 marks.
LuLike omp_sweeps_like(double sweep_ms) {
    LuLike lu;
    lu.sweep_ms = sweep_ms;
    lu.loops_ms = 2;
    lu.loop_marks = 68;
    lu.confined_sweep_rate = 0.01;
    return lu;
}
double lu_like_ms(int iterations, LuLike lu = {}) {
    ConfineCheck check;
    std::uint64_t now = 0;
    bool confined = false;
    double sweep_left = lu.sweep_ms, loops_left = lu.loops_ms, marks_due = 0;
    int done = 0;
    while (done < iterations && now < 600'000 * kMs) {
        double cpu_ms = 0, marks = 0;
        for (int step = 0; step < 50 && done < iterations; ++step) {  // 50 x 0.1 ms: one cycle
            cpu_ms += confined ? 0.1 : 0.2;  // both threads always on a CPU (computing or spinning)
            if (sweep_left > 0) {
                sweep_left -= confined ? 0.1 * lu.confined_sweep_rate : 0.1;
            } else {
                double progress = confined ? 0.05 : 0.1;  // one CPU of two
                loops_left -= progress;
                marks_due += lu.loop_marks * progress / lu.loops_ms;
                if (loops_left <= 0) {
                    ++done;
                    sweep_left = lu.sweep_ms;
                    loops_left = lu.loops_ms;
                }
            }
        }
        auto whole = static_cast<std::uint64_t>(marks_due);
        marks_due -= static_cast<double>(whole);
        marks += static_cast<double>(whole);
        now += kCycle;
        confined = check.step(now, static_cast<std::uint64_t>(marks), static_cast<std::uint64_t>(cpu_ms * kMs),
                              confined ? 1 : 0, true, true, lu.in_construct);
    }
    return static_cast<double>(now) / kMs;
}
}  // namespace

TEST_CASE("confine_check: a job whose hand-overs make no marks is held though its confirmations fail", "[confine_check]") {
    // 300 iterations: 1.8 s unconfined, 19 s confined throughout. Its probes read it hand-over
    // bound, and most confirmations do not; each of those grew the interval to the next probe,
    // up to 6.4 s confined (NPB LU.W gcc throttled: 4.7-46 s against 3.1 s with one thread).
    double ms = lu_like_ms(300);
    INFO("wall " << ms << " ms");
    CHECK(ms < 2 * 1800);
}

TEST_CASE("confine_check: a sweep stalled for a second in a construct is probed without waiting for a mark", "[confine_check]") {
    // Sweeps of 10 ms unconfined take 1 s confined (tests/omp/omp_sweeps.c, 200 hand-overs of
    // 26 us each: 1.7 s natively, 1.8 s with one thread). A window that began at its first mark
    // skipped each stalled sweep, so each confinement lasted a sweep and a window more: told the
    // threads were in serial code, the check keeps the old behaviour and takes 2.2x as long.
    LuLike lu = omp_sweeps_like(10);
    double in_construct = lu_like_ms(150, lu);
    lu.in_construct = false;
    double serial = lu_like_ms(150, lu);
    INFO("wall " << in_construct << " ms in a construct, " << serial << " ms told serial; 1800 ms unconfined");
    CHECK(in_construct < 1.6 * 1800);
    CHECK(serial > 1.3 * in_construct);
}

TEST_CASE("confine_check: a stalled sweep longer than a probe is probed until it makes marks", "[confine_check]") {
    // Sweeps of 31 ms unconfined, 3 s confined (omp_sweeps 50 600: 1.6 s natively). A window in a
    // stalled sweep leaves most of it to run in the probe, so a 15 ms probe made no mark and read
    // "not hand-over bound", and the intervals grew to 6.4 s (2.1-120 s throttled); going on until
    // it has marks, up to kMaxProbeNs, it reaches the loops after the sweep (2.0-3.2 s).
    double ms = lu_like_ms(50, omp_sweeps_like(31));
    INFO("wall " << ms << " ms; 1650 ms unconfined");
    CHECK(ms < 2 * 1650);
}

// APSHIM_CHECK_BOUND (confine_check.hpp, set_bounded): the unconfined windows cost what they do on
// 2 CPUs, at any width.
namespace {
// The phase after each of `n` cycles of `job`.
std::vector<Phase> phases(Job job, bool bounded, int n) {
    job.check.set_bounded(bounded);
    std::vector<Phase> out;
    for (int i = 0; i < n; ++i) {
        job.cycle();
        out.push_back(job.check.phase());
    }
    return out;
}
// How many cycles each run of phase `p` lasted, in order, over `n` cycles of `job` (a run still
// going at the end is not counted).
std::vector<int> runs_of(const Job& job, bool bounded, Phase p, int n) {
    std::vector<int> out;
    int run = 0;
    for (Phase phase : phases(job, bounded, n)) {
        if (phase == p) {
            ++run;
        } else if (run > 0) {
            out.push_back(run);
            run = 0;
        }
    }
    return out;
}
}  // namespace

TEST_CASE("confine_check: the bound changes nothing on 2 CPUs", "[confine_check]") {
    // There a window's surplus beyond one CPU never exceeds its wall time: every phase, cycle by
    // cycle, as without it (a job that is compute-bound, one near the ratio, one hand-over bound
    // through its confirmation and holds, one with sparse marks).
    const Job jobs[] = {Job(10, 11), Job(10, 25), Job(0.1, 50), Job(0.05, 0.1)};
    for (const Job& job : jobs) {
        INFO(job.confined_rate << " / " << job.free_rate);
        REQUIRE(phases(job, true, 4000) == phases(job, false, 4000));
    }
}

TEST_CASE("confine_check: bounded, each unconfined window on 16 CPUs ends at its 2-CPU cost", "[confine_check]") {
    // A cycle unconfined on 16 CPUs uses 75 ms beyond the job's one: the start ends after two
    // (kStartNs = 100 ms; the first began it), a probe after one whatever it reads (twice as far
    // runs its whole length unbounded), a confirmation after kMinBoundedConfirmCycles.
    Job near(10, 20, 16);
    REQUIRE(runs_of(near, false, Phase::start, 400) == std::vector<int>{cycles(ConfineCheck::kStartNs)});
    REQUIRE(runs_of(near, true, Phase::start, 400) == std::vector<int>{2});
    for (int run : runs_of(near, false, Phase::probe, 2000)) REQUIRE(run == cycles(ConfineCheck::kProbeNs));
    std::vector<int> bounded_probes = runs_of(near, true, Phase::probe, 2000);
    REQUIRE(bounded_probes.size() == 3);  // after 0.25, 1 and 4 s confined, as unbounded
    for (int run : bounded_probes) REQUIRE(run == 1);
    // A hand-over-bound job is still found, and held: its start has marks enough, and its
    // confirmation two cycles of each kind.
    Job handover(0.1, 50, 16);
    REQUIRE(runs_of(handover, false, Phase::confirm, 60).front() == ConfineCheck::kConfirmCycles);
    REQUIRE(runs_of(handover, true, Phase::confirm, 60).front() == ConfineCheck::kMinBoundedConfirmCycles);
    handover.check.set_bounded(true);
    int to_hold = handover.until(Phase::hold, 200);
    REQUIRE(to_hold > 0);
    REQUIRE(to_hold * kCycle <= 2 * kCycle + ConfineCheck::kFirstCompareNs +
                                    ConfineCheck::kMinBoundedConfirmCycles * kCycle + 2 * kCycle);
    REQUIRE(handover.check.last_ratio() > 100);
}

// The controller's loop with the bound (controller.cpp, cycle_loop): the check begun at the first
// look (ConfineCheck::begin), then 5 ms cycles, each ended early at the first 1 ms peek that
// finds the open window spent (window_spent), at most kMaxEarlyCycles between cycle ends.
namespace {
struct PeekedJob {
    ConfineCheck check;
    double confined_rate, free_rate;
    int cpus;
    std::uint64_t now = 0, next = kCycle;
    std::uint64_t cpu = 0;  // since the last step
    double marks = 0;       // since the last step (whole ones are stepped, the rest carried)
    bool confined = false;
    int early_cycles = 0;  // since the last cycle end (ConfineCheck::kMaxEarlyCycles)
    std::uint64_t window_since = 0, window_beyond = 0;  // the open window: began, CPU beyond one CPU
    std::vector<std::uint64_t> windows;                 // each closed window's CPU beyond one CPU
    std::uint64_t cycle_beyond = 0;                     // the cycle now: CPU beyond one CPU
    std::vector<std::uint64_t> confirm_unconfined;      // each unconfined cycle of a confirmation: the same
    // From this ms on the job runs in one parallel construct (the check told so at its steps and
    // peeks), before it serial code (one CPU, no marks); -1: never told.
    std::int64_t construct_from_ms = -1;
    PeekedJob(double c, double f, int n, bool begun = true) : confined_rate(c), free_rate(f), cpus(n) {
        check.set_bounded(true);
        if (begun) check.begin(0, true, true);
    }
    // One ms of the job, then a step if a cycle ends or a peek finds the window spent. The check
    // sees the CPU time of every ms since its last step (confined: one CPU; else `cpus`).
    bool serial_at(std::uint64_t t) const { return construct_from_ms >= 0 && t < static_cast<std::uint64_t>(construct_from_ms) * kMs; }
    void ms() {
        bool serial = serial_at(now);
        now += kMs;
        int on = confined || serial ? 1 : cpus;
        cpu += on * kMs;
        if (!serial) marks += (confined ? confined_rate : free_rate) * on;
        if (!confined) window_beyond += (on - 1) * kMs;
        cycle_beyond += (on - 1) * kMs;
        bool in_construct = construct_from_ms >= 0 && !serial_at(now);
        bool peeking = early_cycles < ConfineCheck::kMaxEarlyCycles && now < next && check.window_bounded();
        if (peeking && check.starting()) check.peek_construct(now, cpu, in_construct);
        bool early = peeking && check.window_spent(now, cpu);
        if (now < next && !early) return;
        Phase before = check.phase();
        auto whole = static_cast<std::uint64_t>(marks);
        marks -= static_cast<double>(whole);
        bool was_open = !confined;
        if (before == Phase::confirm && was_open) confirm_unconfined.push_back(cycle_beyond);
        cycle_beyond = 0;
        confined = check.step(now, whole, cpu, confined ? 1 : 0, true, true, in_construct);
        if (early) {
            INFO("an early cycle at " << now / kMs << " ms in " << ConfineCheck::name(before));
            // It closed the window it was run for, but a start whose cycle marked densely
            // (peek_construct: the peek read its stretch as if it made none).
            bool dense_start = before == Phase::start && whole * ConfineCheck::kSparseMarkCpuNs >= cpu;
            if (!dense_start) REQUIRE(!check.window_bounded());
        }
        cpu = 0;
        if (was_open && confined) {
            windows.push_back(window_beyond);
            window_beyond = 0;
        }
        early_cycles = early ? early_cycles + 1 : 0;
        next = now + kCycle;
    }
    void run_ms(int n) {
        for (int i = 0; i < n; ++i) ms();
    }
};
}  // namespace

TEST_CASE("confine_check: bounded and peeked, each window on 16 CPUs ends within a peek of its bound", "[confine_check]") {
    // Begun at the first look, the start counts the job's first cycle, and it ends at the first
    // peek past kStartNs beyond one CPU (15 ms beyond a ms on 16 CPUs): at 7 ms, where stepped once
    // a cycle only it ran its first cycle and two more (225 ms beyond). Each probe ends at its
    // first peek past kProbeNs, 15-30 ms beyond, where a cycle took 75.
    PeekedJob job(10, 20, 16);
    job.run_ms(10000);
    REQUIRE(job.windows.size() == 4);  // the start, then probes after 0.25, 1 and 4 s confined
    CHECK(job.windows[0] >= ConfineCheck::kStartNs);
    CHECK(job.windows[0] <= ConfineCheck::kStartNs + 15 * kMs);
    for (std::size_t i = 1; i < job.windows.size(); ++i) {
        CHECK(job.windows[i] >= ConfineCheck::kProbeNs);
        CHECK(job.windows[i] <= ConfineCheck::kProbeNs + 15 * kMs);
    }
    // A hand-over-bound job is still found by its start, confirmed and held.
    PeekedJob handover(0.1, 50, 16);
    handover.run_ms(400);
    CHECK(handover.check.phase() == Phase::hold);
    CHECK(handover.check.last_ratio() > 100);
}

TEST_CASE("confine_check: bounded and peeked, a confirmation on 16 CPUs costs what it costs on 2", "[confine_check]") {
    // Its unconfined cycles are windows too: each ends within a peek of its share of the
    // confirmation's bound (kConfirmCycles / 2 cycles beyond its CPU, over the
    // kMinBoundedConfirmCycles / 2 unconfined cycles it has at least), and the job is held as
    // before. Whole, each of those cycles used 75 ms beyond one CPU. On 2 CPUs none ends early:
    // all kConfirmCycles / 2 of them use a cycle's length beyond it, as without the bound.
    constexpr std::uint64_t kBound = ConfineCheck::kConfirmCycles / 2 * kCycle;
    constexpr std::uint64_t kUnconfinedAtLeast = ConfineCheck::kMinBoundedConfirmCycles / 2;
    for (int cpus : {16, 2}) {
        INFO(cpus << " CPUs");
        PeekedJob job(0.1, 50, cpus);
        for (int ms = 0; ms < 1000 && job.check.phase() != Phase::hold; ++ms) job.ms();
        REQUIRE(job.check.phase() == Phase::hold);
        const std::vector<std::uint64_t>& cycles = job.confirm_unconfined;
        std::uint64_t spent = 0;
        for (std::uint64_t c : cycles) spent += c;
        if (cpus == 16) {
            REQUIRE(cycles.size() == kUnconfinedAtLeast);
            for (std::uint64_t c : cycles) {
                CHECK(c >= kBound / kUnconfinedAtLeast);
                CHECK(c <= kBound / kUnconfinedAtLeast + 15 * kMs);
            }
            CHECK(spent <= kBound + kUnconfinedAtLeast * 15 * kMs);
        } else {
            REQUIRE(cycles.size() == ConfineCheck::kConfirmCycles / 2);
            for (std::uint64_t c : cycles) CHECK(c == kCycle);
        }
        CHECK(job.check.last_ratio() > 100);
    }
}

TEST_CASE("confine_check: bounded and peeked, a start on 16 CPUs ends at the peek its construct reads sparse", "[confine_check]") {
    // A job that reads its input serially for 22 ms, then runs one long region: without marks
    // (static loops, NPB EP) or with sparse ones (GraphicsMagick's guided chunks). The stretch of
    // construct begins at the first peek in it (15 ms beyond one CPU after the region began, on
    // 16 CPUs), and the start ends at the first peek where the stretch reads sparse as if it made
    // no marks (kQuietStartSurplusNs beyond one CPU, within a peek), or at the first cycle end
    // (25 ms), whose step counts the marks, where it reads sparse with them (kSparseStartNs).
    // Begun at that cycle end instead, the stretch had not read sparse by the peek where the
    // start's bound ended it, 100 ms beyond. A region that marks densely runs its start to that
    // bound as before, also where its stretch read markless at a peek before a cycle end counted
    // its marks (the region from 21 ms: an early cycle at 24 ms that leaves the start open, then
    // one at the bound, kMaxEarlyCycles).
    struct Case {
        double rate;
        std::int64_t from_ms;
        std::uint64_t at_least, at_most;
    };
    const Case cases[] = {{0, 22, ConfineCheck::kQuietStartSurplusNs, ConfineCheck::kQuietStartSurplusNs + 30 * kMs},
                          {0.05, 22, ConfineCheck::kSparseStartNs, ConfineCheck::kQuietStartSurplusNs + 30 * kMs},
                          {20, 22, ConfineCheck::kStartNs, ConfineCheck::kStartNs + 15 * kMs},
                          {20, 21, ConfineCheck::kStartNs, ConfineCheck::kStartNs + 15 * kMs}};
    for (const Case& c : cases) {
        INFO(c.rate << " marks per CPU-ms, the region from " << c.from_ms << " ms");
        PeekedJob job(c.rate, c.rate, 16);
        job.construct_from_ms = c.from_ms;
        for (int ms = 0; ms < 200 && job.windows.empty(); ++ms) job.ms();
        REQUIRE(job.windows.size() == 1);
        CHECK(job.windows[0] >= c.at_least);
        CHECK(job.windows[0] <= c.at_most);
    }
}

TEST_CASE("confine_check: begun at the first look, a start on 2 CPUs lasts kStartNs from it", "[confine_check]") {
    // There the bound and the start's length agree: it ends at 100 ms, one cycle sooner than a
    // start begun at the first cycle's end, and no early cycle comes before (a peek that found
    // the start spent at 100 ms is its cycle's end).
    for (bool begun : {true, false}) {
        PeekedJob job(10, 11, 2, begun);
        int ms = 0;
        while (job.windows.empty() && ms < 1000) {
            job.ms();
            ++ms;
        }
        INFO((begun ? "begun" : "not begun"));
        CHECK(static_cast<std::uint64_t>(ms) * kMs == ConfineCheck::kStartNs + (begun ? 0 : kCycle));
    }
}

TEST_CASE("confine_check: begin starts only a job that would start", "[confine_check]") {
    ConfineCheck unconfinable, unmarkable, started;
    unconfinable.begin(0, /*confinable=*/false, true);
    unmarkable.begin(0, true, /*markable=*/false);
    CHECK(unconfinable.phase() == Phase::idle);
    CHECK(unmarkable.phase() == Phase::idle);
    // Its start over, a job begun again (not done by the controller, which begins once) stays put.
    started.begin(0, true, true);
    CHECK(started.phase() == Phase::start);
    for (int i = 1; i <= 40 && started.phase() == Phase::start; ++i) started.step(i * kCycle, 100, 2 * kCycle, 0, true);
    REQUIRE(started.phase() == Phase::confined);
    started.begin(41 * kCycle, true, true);
    CHECK(started.phase() == Phase::confined);
}
