// Algorithm DP: Sen's Figure 5-2 trace exactly, and the three properties (fair, efficient,
// conservative) plus ">= 1 each" after every event of thousands of random event sequences.
#include <catch2/catch.hpp>

#include <random>
#include <vector>

#include "gat/dp.hpp"

using apshim::gat::dp_check;
using apshim::gat::dp_desire_changed;
using apshim::gat::dp_fair_share;
using apshim::gat::dp_grow;
using apshim::gat::dp_shrink;
using apshim::gat::DpJob;

namespace {

// A tiny job system on top of the DP functions, the way table.cpp drives them.
struct System {
    int P;
    std::vector<DpJob> jobs;
    std::vector<int> ids;  // job id of each entry (Sen numbers jobs 1, 2, ...)
    std::uint64_t next_order = 1;

    void arrive(int id, int desire) {
        jobs.push_back(DpJob{desire, 0, next_order++});
        ids.push_back(id);
        dp_grow(jobs, P, jobs.size() - 1);
    }
    void change(int id, int desire) {
        std::size_t j = index(id);
        int old = jobs[j].desire;
        jobs[j].desire = desire;
        dp_desire_changed(jobs, P, j, old);
    }
    void complete(int id) {
        std::size_t j = index(id);
        jobs.erase(jobs.begin() + static_cast<long>(j));
        ids.erase(ids.begin() + static_cast<long>(j));
        dp_shrink(jobs, P);
    }
    std::size_t index(int id) const {
        for (std::size_t i = 0; i < ids.size(); ++i)
            if (ids[i] == id) return i;
        FAIL("no job " << id);
        return 0;
    }
    std::vector<int> allotments() const {
        std::vector<int> a;
        for (const DpJob& j : jobs) a.push_back(j.allotment);
        return a;
    }
};

}  // namespace

TEST_CASE("DP reproduces Sen's Figure 5-2 trace on 16 processors", "[dp]") {
    System s{16, {}, {}};
    using V = std::vector<int>;
    s.arrive(1, 4);
    CHECK(s.allotments() == V{4});
    s.arrive(2, 16);
    CHECK(s.allotments() == V{4, 12});
    s.arrive(3, 2);
    CHECK(s.allotments() == V{4, 10, 2});
    s.change(3, 16);
    CHECK(s.allotments() == V{4, 6, 6});
    s.arrive(4, 8);
    CHECK(s.allotments() == V{4, 4, 4, 4});
    s.arrive(5, 8);
    CHECK(s.allotments() == V{3, 3, 3, 3, 4});
    s.arrive(6, 8);
    CHECK(s.allotments() == V{2, 2, 3, 3, 3, 3});
    s.complete(2);
    CHECK(s.allotments() == V{3, 4, 3, 3, 3});
    s.complete(3);
    CHECK(s.allotments() == V{4, 4, 4, 4});
    s.complete(6);
    CHECK(s.allotments() == V{4, 6, 6});
}

TEST_CASE("DP fair share follows Sen's Eq. 5.1", "[dp]") {
    // P = 16, J = 3: floor(P/J) = 5; job 1 (d=4) is below it and keeps its 4.
    std::vector<DpJob> jobs{{4, 4, 1}, {16, 6, 2}, {16, 6, 3}};
    CHECK(dp_fair_share(jobs, 16) == Approx(6.0));
    // Everyone below the equipartition: no limit.
    std::vector<DpJob> small{{1, 1, 1}, {2, 2, 2}};
    CHECK(dp_fair_share(small, 16) > 1e9);
}

TEST_CASE("DP keeps every allocation fair, efficient, conservative under random events", "[dp][property]") {
    std::mt19937 rng(20261122);
    long events = 0;
    for (int round = 0; round < 3000; ++round) {
        const int P = std::uniform_int_distribution<int>(1, 64)(rng);
        const int max_jobs = 4 * P;
        System s{P, {}, {}};
        int next_id = 1;
        for (int step = 0; step < 60; ++step, ++events) {
            std::vector<int> before = s.allotments();
            int kind = std::uniform_int_distribution<int>(0, 2)(rng);
            int J = static_cast<int>(s.jobs.size());
            std::size_t changed = SIZE_MAX;
            bool grew = false, shrank = false;
            auto desire = [&] {
                // Mostly small desires, sometimes the whole machine: both regimes of Eq. 5.1.
                return std::uniform_int_distribution<int>(0, 3)(rng) == 0 ? P : std::uniform_int_distribution<int>(1, P)(rng);
            };
            if ((kind == 0 && J < max_jobs) || J == 0) {
                s.arrive(next_id++, desire());
                changed = s.jobs.size() - 1;
                before.push_back(0);
                grew = true;
            } else if (kind == 1) {
                std::size_t j = std::uniform_int_distribution<std::size_t>(0, J - 1)(rng);
                before.erase(before.begin() + static_cast<long>(j));
                s.complete(s.ids[j]);
                shrank = true;
            } else {
                std::size_t j = std::uniform_int_distribution<std::size_t>(0, J - 1)(rng);
                int old = s.jobs[j].desire, d = desire();
                s.change(s.ids[j], d);
                changed = j;
                grew = d > old;
                shrank = d < old;
            }
            auto c = dp_check(s.jobs, P);
            INFO("P=" << P << " J=" << s.jobs.size() << " round " << round << " step " << step);
            REQUIRE(c.fair);
            REQUIRE(c.efficient);
            REQUIRE(c.conservative);
            REQUIRE(c.at_least_one);
            REQUIRE(c.within_P);
            int sum = 0;
            for (const DpJob& j : s.jobs) sum += j.allotment;
            if (static_cast<int>(s.jobs.size()) <= P) REQUIRE(sum <= P);
            // Minimal churn: a job that asks for more takes only from others (nobody else gains);
            // processors given back only flow to others (nobody else loses).
            std::vector<int> after = s.allotments();
            for (std::size_t i = 0; i < after.size(); ++i) {
                if (i == changed) continue;
                if (grew) REQUIRE(after[i] <= before[i]);
                if (shrank) REQUIRE(after[i] >= before[i]);
                if (!grew && !shrank) REQUIRE(after[i] == before[i]);
            }
        }
    }
    CHECK(events == 3000 * 60);
}

TEST_CASE("DP gives every job one processor when jobs outnumber processors", "[dp]") {
    System s{2, {}, {}};
    for (int id = 1; id <= 5; ++id) s.arrive(id, 2);
    CHECK(s.allotments() == std::vector<int>{1, 1, 1, 1, 1});
    s.complete(1);
    s.complete(2);
    s.complete(3);
    CHECK(s.allotments() == std::vector<int>{1, 1});
    s.complete(4);
    CHECK(s.allotments() == std::vector<int>{2});
}

TEST_CASE("DP repairs a corrupted allocation", "[dp]") {
    // Garbage as a crashed writer or a corrupted file could leave it.
    std::vector<DpJob> jobs{{-3, 99, 1}, {1000, -7, 2}, {4, 4, 3}, {2, 0, 4}};
    apshim::gat::dp_repair(jobs, 8);
    CHECK(dp_check(jobs, 8).ok());
    int sum = 0;
    for (const DpJob& j : jobs) sum += j.allotment;
    CHECK(sum <= 8);
}
