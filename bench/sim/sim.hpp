// Discrete-event (unit-time-step) simulator of two-level scheduling, Sen 2004 ch. 3-6:
// jobs are implicit fully strict dags executed by per-job WSAP work stealers; every est_cycle
// steps each job's REAL estimator (shim/estimators) turns its measured inefficiency into a
// desire and the REAL algorithm DP (gat/dp) recomputes every job's allotment.
//
// Model and choices: bench/sim/README.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace apshim::sim {

// One workload: "fib:N", "loopy:N:L", "knary:N:K:R[:W]", or phases joined by '+'
// ("knary:7:4:4+knary:8:5:0" = serial phase, then parallel phase). A suffix "*S" on a phase
// makes every unit of its work S steps ("fib:20*7": fib(20)'s dag, each node 7 steps), so a
// dag's shape and its T1 in steps can be chosen separately (bench/sim/validate.py).
struct Workload {
    enum class Kind : std::uint8_t { Fib, Loopy, Leaf, Knary, Seq };
    Kind kind = Kind::Fib;
    int n = 0, k = 0, r = 0;
    std::int64_t w = 1;             // loopy: leaf length L; knary: work per node
    std::int64_t unit = 1;          // steps per unit of work ("*S" suffix)
    std::vector<Workload> phases;   // Seq only
    std::string text;
};
Workload parse_workload(const std::string& s);  // throws std::invalid_argument
std::int64_t work_of(const Workload& w);         // T1 in steps (exact)
std::int64_t span_of(const Workload& w);         // T_inf in steps (exact)

struct JobSpec {
    Workload work;
    std::int64_t arrival = 0;
    int limit = 0;  // allocation limit (cap on desire); 0 = none
};

struct Config {
    int P = 16;
    int est_cycle = 50;       // steps between desire estimates (per job, from its arrival)
    double eta = 0.5;
    std::string policy = "wsap";  // make_estimator() name
    std::uint64_t seed = 1;
    int steal_cost = 1;       // steps per steal attempt
    int wake_cost = 0;        // steps between two wake-ups of one job (serial waking, Sen eq 7.1); 0 = instant
    int est_cost = 0;         // steps of one random awake worker per estimate (capped at est_cycle/2; see estimate())
    int static_alloc = 0;     // >0: Cilk baseline: each job gets exactly this many workers, FIFO queue; no DP
    bool native = false;      // with static_alloc: no queue, every job starts its workers at arrival even
                              // beyond P (an unmodified runtime; the OS time-slices, see process control)
    // Safe points (where a worker over the allotment goes to sleep). Sen/Cilk-AP: any task
    // boundary (spawn, return, sync) of a working worker, and a thief before its next attempt.
    // outermost_only: only thieves (a worker whose deque ran dry: oneTBB's shim parks a worker
    // only when it returns from an OUTERMOST task, i.e. a whole stolen subtree).
    bool outermost_only = false;
    std::int64_t park_valve = 0;  // >0: a sleeping idle worker wakes after this many steps and runs
                                  // its next (stolen) task before it may sleep again (the shim's 200 ms valve)
    // >0: an idle worker (thief) that found nothing to steal for this many consecutive steps
    // blocks until its job has stealable work again, as real runtimes' idle threads do after
    // spinning (oneTBB: microseconds; libomp: KMP_BLOCKTIME 200 ms; libgomp: GOMP_SPINCOUNT).
    // Blocked workers use no processor. 0: idle workers spin for ever (Sen's model).
    std::int64_t idle_block = 0;
    // --- The shim since 2026-11-23/24 (docs/ARCHITECTURE.md); reproduce.py sets Sen's values. ---
    // Desire a job joins the table with: P (the shim: a lone job runs at full width at once, DP
    // still gives a newcomer no more than its fair share) or 1 (Sen §6.2: explore upwards).
    enum class Join : std::uint8_t { AtP, AtOne };
    Join join_desire = Join::AtP;
    // How a cycle's busy time is measured. timed: per-task hooks, busy = steps of dag work.
    // clocks: the threads' CPU clocks, busy = every step a worker held a processor (work, steals,
    // spinning), against the processor-steps of its allotment (the threads it may run); asleep,
    // blocked or time-sliced-out workers count nothing. automatic: clocks for a cycle throughout
    // which the allotment was >= P (the runtime's native width: the shim's hooks were untimed),
    // timed otherwise.
    enum class Measure : std::uint8_t { Timed, Clocks, Automatic };
    Measure measure = Measure::Timed;
    // The allotment enforced by confinement (sched_setaffinity onto allotment-many CPUs) instead of
    // sleeping at safe points: a job keeps its runtime's P workers awake, and they share its
    // allotment's processors (exactly min(allot, awake) of them run each step, chosen at random).
    bool confine = false;
    // >0: lending while quiet (APSHIM_LEND_MS): after this many quiet steps (at most one worker
    // working, no steal succeeded, nothing stealable) a job holding > 1 processor publishes
    // desire 1 at once if another job is deprived; it asks back its old desire when work appears.
    std::int64_t lend = 0;
    bool trace = false;       // record per-estimate trace rows
    int timeline_every = 0;   // >0: record one allocation-quality row every this many steps
    std::int64_t max_steps = 200'000'000;
};

struct JobResult {
    int id = 0;
    std::string spec;
    std::int64_t arrival = 0, start = 0, finish = -1;
    std::int64_t T1 = 0, Tinf = 0, work_done = 0;
    double avg_allot = 0, avg_usage = 0;
    std::int64_t allprocs = -1;   // steps from start until P workers were working at once (-1: never)
    int cycles = 0;               // estimates made
    int cycles_to_P = -1;         // estimates until the allotment first reached P (-1: never)
    std::int64_t response() const { return finish - arrival; }
};

struct TraceRow {
    enum class Event : std::uint8_t { Estimate, Lend, Reclaim };
    std::int64_t t;
    int job;
    double r;                 // the estimate's inefficiency (0 for lend / reclaim rows)
    int usage, desire, allot; // allot: estimate rows, before DP answers the new desire; lend /
                              // reclaim rows, after
    bool clocks = false;      // the estimate's measure (Config::Measure)
    Event event = Event::Estimate;
};

// Machine-wide allocation quality at one instant (averages over the steps since the last row for
// `busy`). DP's own properties are checked on its allotments (`fair`, `efficient`); `over` and
// `under` measure how far the workers actually awake lag behind those allotments, which is where
// coordinated (task-boundary) reallocation costs something.
struct TimelineRow {
    std::int64_t t;
    int jobs;
    std::int64_t sum_desire, sum_allot, awake;
    double busy;        // working workers per step, averaged over the window
    int deprived;       // jobs with allotment < desire
    int spread;         // max allotment - min allotment of a deprived job (DP fairness: <= 1)
    int over, under;    // sum over jobs of max(0, awake - allot) and max(0, allot - awake)
    bool fair, efficient;
};

struct Result {
    std::vector<JobResult> jobs;
    std::vector<TraceRow> trace;
    std::vector<TimelineRow> timeline;
    std::int64_t makespan = 0;
    // DP statistics
    std::int64_t dp_calls = 0, dp_violations = 0;
    double dp_ns_mean = 0, dp_ns_p50 = 0, dp_ns_p99 = 0, dp_ns_max = 0;  // wall clock: max includes preemption
    int max_jobs = 0;
    // machine-wide, per step averages over [0, makespan)
    double util_alloc = 0;   // sum of allotments / P
    double util_busy = 0;    // working workers / P
    double oversub = 0;      // fraction of steps with more awake workers than P
};

Result simulate(const Config& cfg, const std::vector<JobSpec>& jobs);

// Closed system under churn: `concurrent` jobs at t=0, each departure replaced by a new random
// job after an exponential delay, until `total` jobs have arrived.
Result simulate_churn(const Config& cfg, int concurrent, int total);

}  // namespace apshim::sim
