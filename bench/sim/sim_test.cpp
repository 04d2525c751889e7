// Closed-form checks of the simulator (Sen ch. 3 Theorem 3, §6.1 ramp-up, §5 DP steady state).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include "bench/sim/sim.hpp"

#include <cmath>
#include <cstdio>

using namespace apshim::sim;

namespace {
JobSpec job(const char* w, std::int64_t at = 0) {
    JobSpec j;
    j.work = parse_workload(w);
    j.arrival = at;
    return j;
}
}  // namespace

TEST_CASE("work and span of the generated dags are exact", "[sim]") {
    CHECK(work_of(parse_workload("fib:2")) == 4);   // internal: 2 units; two leaves: 1 each
    CHECK(span_of(parse_workload("fib:2")) == 3);
    CHECK(work_of(parse_workload("loopy:10:5")) == 60);
    CHECK(span_of(parse_workload("loopy:10:5")) == 15);
    CHECK(work_of(parse_workload("knary:3:4:4")) == 21);
    CHECK(span_of(parse_workload("knary:3:4:4")) == 21);  // all children serial: span = work
    CHECK(span_of(parse_workload("knary:3:5:0")) == 3);
    Config c;
    c.P = 4;
    for (const char* w : {"fib:12", "loopy:20:30", "knary:4:3:1", "knary:3:4:4+knary:4:5:0"}) {
        Result r = simulate(c, {job(w)});
        INFO(w);
        CHECK(r.jobs[0].work_done == r.jobs[0].T1);  // every unit of the dag executed once
    }
}

TEST_CASE("one job alone: greedy bound and ramp-up to P", "[sim]") {
    // fib: tiny tasks; loopy (Sen §4.2): a serial spawn loop of long leaves, the case where the
    // instantaneous parallelism misleads but WSAP's steal-based estimate does not.
    for (const char* w : {"fib:22", "loopy:64:400"})
        for (double eta : {0.5, 0.75})
            for (int P : {8, 16, 32}) {
                Config c;
                c.P = P;
                c.est_cycle = 50;
                c.eta = eta;
                Result r = simulate(c, {job(w)});
                const JobResult& j = r.jobs[0];
                // Theorem 3 with P̄ as the job's average usage (as Sen measures it, §7.2.3) and as its allotment.
                double Tn = static_cast<double>(j.response()), T1 = static_cast<double>(j.T1), Ti = static_cast<double>(j.Tinf);
                double ratio_u = Tn / (T1 / j.avg_usage + Ti), ratio_a = Tn / (T1 / j.avg_allot + Ti);
                int log_cycles = static_cast<int>(std::ceil(std::log(P) / std::log(1 / eta) - 1e-9));
                std::printf("sim: %s eta=%.2f P=%d T=%lld T1=%lld Tinf=%lld Pbar(usage/allot)=%.2f/%.2f "
                            "T/(T1/Pbar+Tinf)=%.3f/%.3f cycles_to_P=%d (ceil log_1/eta P=%d)\n",
                            w, eta, P, static_cast<long long>(j.response()), static_cast<long long>(j.T1),
                            static_cast<long long>(j.Tinf), j.avg_usage, j.avg_allot, ratio_u, ratio_a, j.cycles_to_P,
                            log_cycles);
                INFO(w << " eta " << eta << " P " << P);
                CHECK(j.work_done == j.T1);
                CHECK(ratio_u <= 1.5);
                CHECK(ratio_a <= 1.5);
                REQUIRE(j.cycles_to_P >= 0);
                CHECK(j.cycles_to_P <= log_cycles + 2);
                CHECK(r.dp_violations == 0);
            }
}

TEST_CASE("two identical jobs under DP: P/2 each, finishing together", "[sim]") {
    Config c;
    c.P = 16;
    c.est_cycle = 50;
    c.trace = true;
    Result r = simulate(c, {job("fib:24"), job("fib:24")});
    REQUIRE(r.jobs.size() == 2);
    // Steady state: the middle half of the run, both jobs present.
    std::int64_t end = std::min(r.jobs[0].finish, r.jobs[1].finish);
    int rows = 0, at_half = 0;
    for (const TraceRow& t : r.trace) {
        if (t.t < end / 4 || t.t > 3 * end / 4) continue;
        ++rows;
        if (t.allot == c.P / 2) ++at_half;
    }
    double f0 = static_cast<double>(r.jobs[0].finish), f1 = static_cast<double>(r.jobs[1].finish);
    std::printf("sim: pair fib(24) P=16 finish %.0f / %.0f (diff %.2f%%), allot==8 in %d/%d steady estimates, avg allot %.2f / %.2f\n",
                f0, f1, 100 * std::abs(f0 - f1) / std::max(f0, f1), at_half, rows, r.jobs[0].avg_allot, r.jobs[1].avg_allot);
    REQUIRE(rows > 0);
    CHECK(at_half == rows);
    CHECK(std::abs(f0 - f1) / std::max(f0, f1) < 0.05);
    CHECK(r.dp_violations == 0);
}

TEST_CASE("many jobs under churn: every DP allocation fair, efficient, conservative", "[sim]") {
    Config c;
    c.P = 64;
    c.est_cycle = 20;
    c.timeline_every = 10;
    Result r = simulate_churn(c, 96, 160);  // more jobs than processors at first: each keeps one
    CHECK(r.dp_calls > 160);
    CHECK(r.dp_violations == 0);
    CHECK(r.max_jobs > c.P);
    REQUIRE(!r.timeline.empty());
    for (const TimelineRow& t : r.timeline) {
        INFO("t " << t.t);
        CHECK(t.fair);
        CHECK(t.efficient);
        CHECK(t.spread <= 1);
        CHECK(t.sum_allot <= std::max<std::int64_t>(c.P, t.jobs));
    }
    for (const JobResult& j : r.jobs) CHECK(j.work_done == j.T1);
}

TEST_CASE("a work unit of S steps scales T1, Tinf and the executed work exactly", "[sim]") {
    for (const char* base : {"fib:12", "loopy:20:30", "knary:4:3:1:2"}) {
        Workload w1 = parse_workload(base), w7 = parse_workload(std::string(base) + "*7");
        INFO(base);
        CHECK(work_of(w7) == 7 * work_of(w1));
        CHECK(span_of(w7) == 7 * span_of(w1));
        Config c;
        c.P = 4;
        Result r = simulate(c, {job((std::string(base) + "*7").c_str())});
        CHECK(r.jobs[0].work_done == r.jobs[0].T1);
        CHECK(r.jobs[0].T1 == work_of(w7));
    }
    CHECK(work_of(parse_workload("fib:10*3+knary:3:2:0:5*2")) == 3 * work_of(parse_workload("fib:10")) + 2 * 7 * 5);
    CHECK_THROWS(parse_workload("fib:10*0"));
}

TEST_CASE("native runtimes: two jobs with P workers each time-share P processors fairly", "[sim]") {
    // No allocator: 2P awake workers on P processors, each runs with probability 1/2 per step, so
    // both jobs progress at P/2 processors and finish together at about 2 T1 / P.
    Config c;
    c.P = 2;
    c.static_alloc = 2;
    c.native = true;
    Result r = simulate(c, {job("fib:20*3"), job("fib:20*3")});
    REQUIRE(r.jobs.size() == 2);
    double ideal = 2.0 * static_cast<double>(r.jobs[0].T1) / c.P;
    for (const JobResult& j : r.jobs) {
        CHECK(j.start == 0);  // no queue, unlike the Cilk baseline
        CHECK(j.work_done == j.T1);
        CHECK(static_cast<double>(j.finish) / ideal == Approx(1.0).epsilon(0.03));
    }
    CHECK(r.oversub > 0.95);
    c.native = false;  // the Cilk baseline queues the second job instead
    Result q = simulate(c, {job("fib:20*3"), job("fib:20*3")});
    CHECK(q.jobs[1].start == q.jobs[0].finish);
}

TEST_CASE("idle workers that block leave their processor to the co-runner", "[sim]") {
    // P = 2, native runtimes with 2 workers each: a job with a short parallel phase (both of its
    // workers start) and then a serial phase of L steps, beside fib.
    // Spinning (Sen's model): 4 awake workers, the serial one runs half the time: T ~ 2L.
    // Blocking after 10 idle steps: 3 awake workers, it runs 2/3 of the time: T ~ 1.5L.
    const std::int64_t L = 30000;
    for (std::int64_t block : {std::int64_t{0}, std::int64_t{10}}) {
        Config c;
        c.P = 2;
        c.static_alloc = 2;
        c.native = true;
        c.idle_block = block;
        Result r = simulate(c, {job("knary:3:2:0:20+knary:1:1:1:30000"), job("fib:20*4")});
        REQUIRE(r.jobs[1].finish > r.jobs[0].finish);  // fib is longer: the co-runner throughout
        double ratio = static_cast<double>(r.jobs[0].finish) / static_cast<double>(L);
        INFO("idle_block " << block);
        CHECK(ratio == Approx(block == 0 ? 2.0 : 1.5).epsilon(0.03));
        CHECK(r.jobs[1].work_done == r.jobs[1].T1);
    }
}

TEST_CASE("safe points only between outermost tasks: a recursive job keeps workers over its allotment", "[sim]") {
    // Two fib jobs on P = 2; the second arrives when the first runs on 2 workers. With Sen's safe
    // points the first drops to its allotment of 1 at once; when workers may only leave after a
    // whole stolen subtree (the oneTBB adapter's rule) it keeps 2 awake for long stretches.
    double excess[2];
    for (int outer = 0; outer < 2; ++outer) {
        Config c;
        c.P = 2;
        c.est_cycle = 100;
        c.outermost_only = outer == 1;
        Result r = simulate(c, {job("fib:20*4"), job("fib:20*4", 20000)});
        const JobResult& j = r.jobs[0];
        CHECK(j.work_done == j.T1);
        excess[outer] = j.avg_usage - j.avg_allot;
    }
    std::printf("sim: fib beside fib, usage - allotment: task-boundary safe points %.3f, outermost only %.3f\n",
                excess[0], excess[1]);
    CHECK(excess[0] < 0.02);
    CHECK(excess[1] > 0.1);
}
