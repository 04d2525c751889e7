// Placement (gat/placement.hpp): which processors each job runs on.
#include <catch2/catch.hpp>

#include <vector>

#include "gat/placement.hpp"

using namespace apshim::gat;

namespace {
ProcSet set_of(std::initializer_list<int> procs) {
    ProcSet s;
    for (int p : procs) s.set(p);
    return s;
}
bool disjoint(const std::vector<PlacedJob>& jobs) {
    ProcSet seen;
    for (const PlacedJob& j : jobs) {
        if ((seen & j.procs).any()) return false;
        seen |= j.procs;
    }
    return true;
}
}  // namespace

TEST_CASE("placement: newcomers get the lowest free runs, disjoint, exactly their allotment") {
    std::vector<PlacedJob> jobs{{8, {}}, {4, {}}, {4, {}}};
    place(jobs, 16);
    CHECK(jobs[0].procs == set_of({0, 1, 2, 3, 4, 5, 6, 7}));
    CHECK(jobs[1].procs == set_of({8, 9, 10, 11}));
    CHECK(jobs[2].procs == set_of({12, 13, 14, 15}));
    CHECK(disjoint(jobs));
}

TEST_CASE("placement: sets are stable while allotments stay, and a job that grows grows next to its own") {
    std::vector<PlacedJob> jobs{{8, {}}, {8, {}}};
    place(jobs, 16);
    std::vector<PlacedJob> again = jobs;
    place(again, 16);
    CHECK(again[0].procs == jobs[0].procs);
    CHECK(again[1].procs == jobs[1].procs);
    // Job 0 shrinks to 4 (keeps its lowest), job 1 grows to 12: it takes the freed 4..7, the ones
    // next to its own 8..15.
    again[0].allotment = 4;
    again[1].allotment = 12;
    place(again, 16);
    CHECK(again[0].procs == set_of({0, 1, 2, 3}));
    CHECK(again[1].procs == set_of({4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}));
    CHECK(disjoint(again));
}

TEST_CASE("placement: a departure frees processors without moving the others") {
    std::vector<PlacedJob> jobs{{4, {}}, {4, {}}, {4, {}}, {4, {}}};
    place(jobs, 16);
    ProcSet third = jobs[2].procs;
    jobs.erase(jobs.begin() + 1);  // the second job left
    jobs[0].allotment = 6;         // DP hands its processors out
    jobs[1].allotment = 5;
    jobs[2].allotment = 5;
    place(jobs, 16);
    CHECK((jobs[1].procs & third) == third);  // the third job kept all it had
    CHECK(jobs[0].procs.count() == 6);
    CHECK(jobs[1].procs.count() == 5);
    CHECK(jobs[2].procs.count() == 5);
    CHECK(disjoint(jobs));
}

TEST_CASE("placement: more jobs than processors share the least shared, never go empty") {
    std::vector<PlacedJob> jobs(5, PlacedJob{1, {}});
    place(jobs, 2);
    int on0 = 0, on1 = 0;
    for (const PlacedJob& j : jobs) {
        CHECK(j.procs.count() == 1);
        on0 += j.procs[0];
        on1 += j.procs[1];
    }
    CHECK(on0 + on1 == 5);
    CHECK((on0 - on1 <= 1 && on1 - on0 <= 1));
}

TEST_CASE("placement: garbage in (overlaps, indices beyond P, wild allotments) comes out valid") {
    std::vector<PlacedJob> jobs{{3, set_of({0, 1, 2, 40})}, {3, set_of({1, 2, 3})}, {99, {}}};
    place(jobs, 8);
    CHECK(jobs[0].procs == set_of({0, 1, 2}));  // the earlier job keeps the contested ones
    CHECK(jobs[1].procs.count() == 3);
    CHECK(jobs[1].procs[3]);                    // and the later one keeps what was its alone
    CHECK(jobs[2].procs.count() == 8);          // clamped to P, sharing once nothing is free
    for (const PlacedJob& j : jobs)
        for (int i = 8; i < kMaxProcessors; ++i) CHECK_FALSE(j.procs[i]);
}

TEST_CASE("placement: row words round-trip") {
    ProcSet s = set_of({0, 63, 64, 1000, kMaxProcessors - 1});
    std::uint64_t words[kMaxProcessors / 64] = {};
    procs_to_words(s, words);
    CHECK(words[0] == ((std::uint64_t{1} << 63) | 1u));
    CHECK(procs_from_words(words) == s);
}
