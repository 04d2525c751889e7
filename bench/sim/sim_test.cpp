// Closed-form checks of the simulator (Sen ch. 3 Theorem 3, §6.1 ramp-up, §5 DP steady state).
#include <catch2/catch.hpp>  // main(): Catch2's, compiled once in tests/unit (catch_main)

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

// Sen's model: jobs join at desire 1 and explore upwards (the closed forms below are his).
Config sen() {
    Config c;
    c.join_desire = Config::Join::AtOne;
    return c;
}

// The trace rows of one job (optionally only one kind of event).
std::vector<TraceRow> rows_of(const Result& r, int job_id) {
    std::vector<TraceRow> out;
    for (const TraceRow& t : r.trace)
        if (t.job == job_id) out.push_back(t);
    return out;
}

const TraceRow* first_event(const Result& r, int job_id, TraceRow::Event e) {
    for (const TraceRow& t : r.trace)
        if (t.job == job_id && t.event == e) return &t;
    return nullptr;
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
                Config c = sen();
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
    Config c = sen();
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
        Config c = sen();
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

TEST_CASE("join at desire P: a lone job holds P at once, a newcomer gets its fair share", "[sim]") {
    // The shim joins at P (its runtime's width); Sen joins at 1 and doubles per estimate.
    for (Config::Join join : {Config::Join::AtP, Config::Join::AtOne}) {
        Config c;
        c.P = 8;
        c.est_cycle = 200;
        c.join_desire = join;
        c.trace = true;
        Result r = simulate(c, {job("fib:20*3"), job("fib:20*3", 1000)});
        std::vector<TraceRow> first = rows_of(r, 0), second = rows_of(r, 1);
        REQUIRE(!first.empty());
        REQUIRE(!second.empty());
        bool at_P = join == Config::Join::AtP;
        INFO("join at " << (at_P ? "P" : "1"));
        // Trace rows show the allotment held during the cycle before each estimate.
        CHECK((first[0].allot == c.P) == at_P);
        CHECK((r.jobs[0].allprocs < c.est_cycle) == at_P);
        if (at_P) CHECK(second[0].allot == c.P / 2);  // DP: no more than its fair share
        CHECK(r.dp_violations == 0);
    }
}

TEST_CASE("clocks read spinning thieves as busy and blocked workers as idle; hooks the reverse", "[sim]") {
    // One serial task alone at allotment P = 4: one worker works, three look for work. The first
    // estimate's inefficiency under each measure, with the thieves spinning and then blocking.
    auto first_r = [](Config::Measure m, std::int64_t block) {
        Config c;
        c.P = 4;
        c.est_cycle = 1000;
        c.measure = m;
        c.idle_block = block;
        c.trace = true;
        Result r = simulate(c, {job("knary:1:1:1:5000")});
        REQUIRE(!r.trace.empty());
        return r.trace.front();
    };
    TraceRow spin_timed = first_r(Config::Measure::Timed, 0), spin_clocks = first_r(Config::Measure::Clocks, 0);
    TraceRow block_timed = first_r(Config::Measure::Timed, 10), block_clocks = first_r(Config::Measure::Clocks, 10);
    TraceRow spin_auto = first_r(Config::Measure::Automatic, 0);
    std::printf("sim: serial task alone at P=4, first r: spinning timed %.3f clocks %.3f; blocking timed %.3f clocks %.3f\n",
                spin_timed.r, spin_clocks.r, block_timed.r, block_clocks.r);
    CHECK(spin_timed.r == Approx(0.75).margin(0.02));
    CHECK(spin_clocks.r < 0.02);
    CHECK(spin_clocks.r < spin_timed.r);
    CHECK(block_timed.r < 0.05);
    CHECK(block_clocks.r == Approx(0.75).margin(0.05));
    CHECK(!spin_timed.clocks);
    CHECK(spin_clocks.clocks);
    CHECK(spin_auto.clocks);  // alone at allotment P the whole cycle: the hooks were untimed
    CHECK(spin_auto.r == spin_clocks.r);

    // auto: throttled (allotment 1 < P beside a co-runner) the hooks time again.
    Config c;
    c.P = 2;
    c.est_cycle = 500;
    c.measure = Config::Measure::Automatic;
    c.trace = true;
    Result r = simulate(c, {job("fib:18*3"), job("fib:18*3")});
    std::vector<TraceRow> rows = rows_of(r, 0);
    REQUIRE(rows.size() > 2);
    CHECK(rows[0].allot == 1);
    CHECK(!rows[0].clocks);
}

TEST_CASE("confinement: every worker stays awake and a job uses no more processors than its allotment", "[sim]") {
    // Four fib jobs at P = 4 join at 4 and get 1 processor each. Confined, each keeps its 4
    // workers awake (16 on 4 processors) yet runs at most 1 per step; without confinement the
    // surplus workers sleep at their next safe point.
    for (bool confine : {true, false}) {
        Config c;
        c.P = 4;
        c.est_cycle = 100000;  // no estimate: the joining allotments throughout
        c.confine = confine;
        c.timeline_every = 50;
        Result r = simulate(c, {job("fib:18*2"), job("fib:18*2"), job("fib:18*2"), job("fib:18*2")});
        INFO("confine " << confine);
        REQUIRE(r.timeline.size() > 4);
        const TimelineRow& mid = r.timeline[r.timeline.size() / 2];
        REQUIRE(mid.jobs == 4);
        REQUIRE(mid.sum_allot == 4);
        CHECK(mid.awake == (confine ? 16 : 4));
        for (const JobResult& j : r.jobs) {
            CHECK(j.work_done == j.T1);
            if (confine) CHECK(j.avg_usage <= j.avg_allot + 1e-9);
            CHECK(j.avg_usage > 0.95 * j.avg_allot);  // the allotment's processors are used
        }
        std::printf("sim: 4 fib at P=4, confine %d: awake %lld mid-run, job 0 usage %.3f allot %.3f\n", confine ? 1 : 0,
                    static_cast<long long>(mid.awake), r.jobs[0].avg_usage, r.jobs[0].avg_allot);
    }
}

TEST_CASE("lending while quiet: a serial phase gives its processors away at once and asks them back", "[sim]") {
    // P = 4: a job with a serial phase (one task of S steps) then a parallel phase, beside fib
    // wanting all 4 processors: 2 + 2 from the joins. With lending it publishes desire 1 about L
    // steps into the serial phase, long before its first estimate, and asks back its old desire
    // (4: its join) when the parallel phase begins; without, its desire moves only at estimates.
    const std::int64_t L = 100, S = 20000;
    for (std::int64_t lend : {L, std::int64_t{0}}) {
        Config c;
        c.P = 4;
        c.est_cycle = 5000;
        c.confine = true;
        c.measure = Config::Measure::Automatic;
        c.lend = lend;
        c.idle_block = 10;  // idle threads block (as real ones do): the serial task keeps its CPU
        c.trace = true;
        Result r = simulate(c, {job("knary:1:1:1:20000+knary:8:4:0:3"), job("fib:24*2")});
        INFO("lend " << lend);
        REQUIRE(r.jobs[1].finish > r.jobs[0].finish);  // the co-runner wants more throughout
        const TraceRow* lent = first_event(r, 0, TraceRow::Event::Lend);
        const TraceRow* back = first_event(r, 0, TraceRow::Event::Reclaim);
        std::int64_t first_desire_1 = -1;
        for (const TraceRow& t : rows_of(r, 0))
            if (t.desire == 1) { first_desire_1 = t.t; break; }
        std::printf("sim: serial phase beside fib, lend %lld: desire 1 first at t=%lld, reclaim at t=%lld\n",
                    static_cast<long long>(lend), static_cast<long long>(first_desire_1),
                    static_cast<long long>(back ? back->t : -1));
        CHECK(r.dp_violations == 0);
        for (const JobResult& j : r.jobs) CHECK(j.work_done == j.T1);
        if (lend > 0) {
            REQUIRE(lent != nullptr);
            REQUIRE(back != nullptr);
            CHECK(lent->t <= L + 10);
            CHECK(lent->allot == 1);          // DP gave its other processor to fib at once
            CHECK(first_desire_1 == lent->t);
            CHECK(back->t >= S);
            CHECK(back->t <= S + 10);
            CHECK(back->desire == c.P);       // the desire it had before lending, not 1
            CHECK(back->allot == c.P / 2);
            for (const TraceRow& t : rows_of(r, 0))  // its estimates while lent keep publishing 1
                if (t.event == TraceRow::Event::Estimate && t.t > lent->t && t.t < back->t) CHECK(t.desire == 1);
        } else {
            CHECK(lent == nullptr);
            CHECK(back == nullptr);
            CHECK((first_desire_1 < 0 || first_desire_1 >= c.est_cycle));
        }
    }
}

TEST_CASE("no lending where it cannot help: alone, or at allotment 1", "[sim]") {
    Config c;
    c.P = 2;
    c.est_cycle = 2500;
    c.confine = true;
    c.measure = Config::Measure::Automatic;
    c.lend = 500;
    c.trace = true;
    Result alone = simulate(c, {job("knary:1:1:1:20000+knary:8:4:0:3")});
    CHECK(first_event(alone, 0, TraceRow::Event::Lend) == nullptr);
    // At P = 2 two jobs hold 1 processor each: nothing to lend.
    Result pair = simulate(c, {job("knary:1:1:1:20000+knary:8:4:0:3"), job("fib:22*2")});
    CHECK(first_event(pair, 0, TraceRow::Event::Lend) == nullptr);
}

TEST_CASE("confined timed hooks: a thread time-sliced out inside a task counts as busy", "[sim]") {
    // P = 4, confined, the timed measure: a serial chain (one worker ever inside a task) beside
    // three fib jobs, allotment 1 each, so its 4 workers share one processor and the one with
    // the task runs ~1/4 of the steps. The real hooks time tasks by wall clock: that worker is
    // busy every step, thieves none, usage p = min(threads that worked, allotment) = 1, so
    // r = 0 and WSAP asks p/eta = 2 (counting only the steps it ran read r ~0.75 and desire 1
    // for ever). When the fib jobs leave, DP grants the desire.
    Config c;
    c.P = 4;
    c.est_cycle = 100;
    c.eta = 0.5;
    c.confine = true;
    c.measure = Config::Measure::Timed;
    c.trace = true;
    Result r = simulate(c, {job("knary:7:4:4"), job("fib:16"), job("fib:16"), job("fib:16")});
    std::int64_t others_gone = 0;
    for (int i = 1; i < 4; ++i) others_gone = std::max(others_gone, r.jobs[static_cast<std::size_t>(i)].finish);
    REQUIRE(r.jobs[0].finish > others_gone + 10 * c.est_cycle);
    int shared = 0, max_allot_after = 0;
    double max_r = 0;
    for (const TraceRow& t : rows_of(r, 0)) {
        if (t.t < others_gone - c.est_cycle) {  // all four jobs running the whole cycle
            ++shared;
            CHECK(t.allot == 1);
            CHECK(t.usage == 1);
            CHECK(t.desire == 2);
            max_r = std::max(max_r, t.r);
        } else if (t.t > others_gone) {
            max_allot_after = std::max(max_allot_after, t.allot);
        }
    }
    std::printf("sim: serial chain confined at allotment 1 (P=4, timed): %d estimates, max r %.3f; allotment after the others left %d\n",
                shared, max_r, max_allot_after);
    CHECK(shared >= 40);
    CHECK(max_r < 0.05);
    CHECK(max_allot_after >= 2);
    CHECK(r.jobs[0].work_done == r.jobs[0].T1);

    // The clocks measure is unchanged: a descheduled thread's CPU clock does not advance, and the
    // spinning thieves' held steps fill the one processor (r ~0 there too, for that reason).
    c.measure = Config::Measure::Clocks;
    Result rc = simulate(c, {job("knary:7:4:4"), job("fib:16"), job("fib:16"), job("fib:16")});
    std::vector<TraceRow> rows = rows_of(rc, 0);
    REQUIRE(!rows.empty());
    CHECK(rows.front().clocks);
    CHECK(rows.front().usage == 1);
}
