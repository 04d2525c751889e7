// What the probing checks share (shim/probe_window.hpp): a window's recent part, and the waits
// that grow between probes and holds.
#include <catch2/catch.hpp>

#include "shim/probe_window.hpp"

using apshim::Backoff;
using apshim::CountedProgress;
using apshim::Progress;
using apshim::RecentProgress;

namespace {
constexpr std::uint64_t kMs = 1'000'000;
}

TEST_CASE("probe_window: progress per wall and per CPU time, none for an empty window", "[probe_window]") {
    REQUIRE(Progress{}.per_wall() == 0);
    REQUIRE(Progress{}.per_cpu() == 0);
    Progress p{30, 20 * kMs, 10 * kMs};
    REQUIRE(p.per_wall() == Approx(3.0 / kMs));
    REQUIRE(p.per_cpu() == Approx(1.5 / kMs));
}

TEST_CASE("probe_window: the recent part is the last span to 2 span, the whole while shorter", "[probe_window]") {
    RecentProgress r(100 * kMs);
    r.restart(1000 * kMs);
    std::uint64_t now = 1000 * kMs;
    for (int i = 1; i <= 19; ++i) r.add(now += 5 * kMs, 1, 2 * kMs);  // 95 ms: one bucket, the whole window
    REQUIRE(r.recent().marks == 19);
    REQUIRE(r.recent().cpu_ns == 38 * kMs);
    REQUIRE(r.recent().wall_ns == 95 * kMs);
    r.add(now += 5 * kMs, 1, 2 * kMs);  // 100 ms: the bucket is full and becomes the previous one
    REQUIRE(r.recent().marks == 20);
    REQUIRE(r.recent().wall_ns == 100 * kMs);
    for (int i = 0; i < 19; ++i) r.add(now += 5 * kMs, 3);  // a denser phase, in the next bucket
    REQUIRE(r.recent().marks == 77);
    REQUIRE(r.recent().wall_ns == 195 * kMs);
    r.add(now += 5 * kMs, 3);  // that bucket is full: the first phase's is gone
    REQUIRE(r.recent().marks == 60);
    REQUIRE(r.recent().wall_ns == 100 * kMs);
    r.add(now += 5 * kMs, 3);
    REQUIRE(r.recent().marks == 63);
    REQUIRE(r.recent().wall_ns == 105 * kMs);
    REQUIRE(r.recent().cpu_ns == 0);
    r.restart(now);
    REQUIRE(r.recent().marks == 0);
    REQUIRE(r.recent().wall_ns == 0);
}

TEST_CASE("probe_window: a serial stretch ends a window, shorter serial bits stay in it", "[probe_window]") {
    CountedProgress w;
    std::uint64_t now = 1000 * kMs;
    w.restart(now);
    for (int i = 0; i < 10; ++i) w.add(now += 5 * kMs, 2, 0, true);  // 50 ms of parallel work
    for (int i = 0; i < 3; ++i) w.add(now += 5 * kMs, 0, 0, true, /*parallel=*/false);  // 15 ms serial: in
    REQUIRE(w.recent().marks == 20);
    REQUIRE(w.recent().wall_ns == 65 * kMs);
    w.add(now += 5 * kMs, 2, 0, true);
    for (int i = 0; i < 3; ++i) w.add(now += 5 * kMs, 0, 0, true, false);
    REQUIRE(w.recent().wall_ns == 85 * kMs);
    w.add(now += 5 * kMs, 0, 0, true, false);  // 20 ms since the last parallel work: the window ends
    REQUIRE(w.recent().marks == 0);
    REQUIRE(w.recent().wall_ns == 0);
    for (int i = 0; i < 200; ++i) w.add(now += 5 * kMs, 0, 0, true, false);  // and stays empty through the stretch
    REQUIRE(w.recent().wall_ns == 0);
    w.add(now += 5 * kMs, 3, 0, true);  // the next phase is the window
    w.add(now += 5 * kMs, 3, 0, true);
    REQUIRE(w.recent().marks == 6);
    REQUIRE(w.recent().wall_ns == 10 * kMs);
}

TEST_CASE("probe_window: a backoff grows to its cap and starts over", "[probe_window]") {
    Backoff b(250 * kMs, 4, 6400 * kMs);
    REQUIRE(b.ns() == 250 * kMs);
    b.grow();
    REQUIRE(b.ns() == 1000 * kMs);
    b.grow();
    b.grow();
    REQUIRE(b.ns() == 6400 * kMs);  // 16 s capped
    b.grow();
    REQUIRE(b.ns() == 6400 * kMs);
    b.reset();
    REQUIRE(b.ns() == 250 * kMs);
}
