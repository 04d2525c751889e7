#include "bench/sim/sim.hpp"

#include "gat/dp.hpp"
#include "shim/estimators/estimator.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>

namespace apshim::sim {

// ---------------------------------------------------------------------------------------------
// Workloads: parsing and closed-form work / span.

namespace {
std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> out;
    std::string cur;
    std::istringstream in(s);
    while (std::getline(in, cur, sep)) out.push_back(cur);
    return out;
}
long to_long(const std::string& s) {
    std::size_t pos = 0;
    long v = std::stol(s, &pos);
    if (pos != s.size() || v < 0) throw std::invalid_argument("bad number '" + s + "'");
    return v;
}
}  // namespace

Workload parse_workload(const std::string& s) {
    Workload w;
    w.text = s;
    if (s.find('+') != std::string::npos) {
        w.kind = Workload::Kind::Seq;
        for (const std::string& p : split(s, '+')) w.phases.push_back(parse_workload(p));
        return w;
    }
    std::size_t star = s.find('*');
    if (star != std::string::npos) {
        try {
            w.unit = to_long(s.substr(star + 1));
        } catch (const std::logic_error& e) {
            throw std::invalid_argument("bad workload '" + s + "': " + e.what());
        }
        if (w.unit < 1) throw std::invalid_argument("bad workload '" + s + "': unit must be >= 1");
    }
    std::vector<std::string> f = split(s.substr(0, star), ':');
    if (f.empty()) throw std::invalid_argument("empty workload");
    try {
        if (f[0] == "fib" && f.size() == 2) {
            w.kind = Workload::Kind::Fib;
            w.n = static_cast<int>(to_long(f[1]));
        } else if (f[0] == "loopy" && (f.size() == 2 || f.size() == 3)) {
            w.kind = Workload::Kind::Loopy;
            w.n = static_cast<int>(to_long(f[1]));
            w.w = f.size() == 3 ? to_long(f[2]) : w.n;  // Sen: N subcomputations of N units
            if (w.w < 1) throw std::invalid_argument("loopy leaf must be >= 1");
        } else if (f[0] == "knary" && (f.size() == 4 || f.size() == 5)) {
            w.kind = Workload::Kind::Knary;
            w.n = static_cast<int>(to_long(f[1]));
            w.k = static_cast<int>(to_long(f[2]));
            w.r = static_cast<int>(to_long(f[3]));
            w.w = f.size() == 5 ? to_long(f[4]) : 1;
            if (w.n < 1 || w.r > w.k || w.w < 1) throw std::invalid_argument("knary needs n>=1, r<=k, w>=1");
        } else {
            throw std::invalid_argument("unknown workload '" + s + "'");
        }
    } catch (const std::logic_error& e) {
        throw std::invalid_argument("bad workload '" + s + "': " + e.what());
    }
    return w;
}

namespace {
std::int64_t fib_work(int n) {
    std::int64_t a = 1, b = 1;  // W(0), W(1)
    for (int i = 2; i <= n; ++i) { std::int64_t c = 2 + a + b; a = b; b = c; }
    return n < 1 ? 1 : b;
}
std::int64_t knary_work(int n, int k, std::int64_t w) {
    std::int64_t t = w;
    for (int i = 2; i <= n; ++i) t = w + k * t;
    return t;
}
std::int64_t knary_span(int n, int k, int r, std::int64_t w) {
    std::int64_t s = w;
    for (int i = 2; i <= n; ++i) s = w + static_cast<std::int64_t>(r) * s + (k > r ? s : 0);
    return s;
}
}  // namespace

std::int64_t work_of(const Workload& w) {
    switch (w.kind) {
        case Workload::Kind::Fib: return w.unit * fib_work(w.n);
        case Workload::Kind::Loopy: return w.unit * (w.n + w.n * w.w);
        case Workload::Kind::Leaf: return w.unit * w.w;
        case Workload::Kind::Knary: return w.unit * knary_work(w.n, w.k, w.w);
        case Workload::Kind::Seq: {
            std::int64_t t = 0;
            for (const Workload& p : w.phases) t += work_of(p);
            return t;
        }
    }
    return 0;
}

std::int64_t span_of(const Workload& w) {
    switch (w.kind) {
        case Workload::Kind::Fib: return w.unit * (w.n < 2 ? 1 : 2 * (w.n - 1) + 1);
        case Workload::Kind::Loopy: return w.unit * (w.n + w.w);
        case Workload::Kind::Leaf: return w.unit * w.w;
        case Workload::Kind::Knary: return w.unit * knary_span(w.n, w.k, w.r, w.w);
        case Workload::Kind::Seq: {
            std::int64_t t = 0;
            for (const Workload& p : w.phases) t += span_of(p);
            return t;
        }
    }
    return 0;
}

// ---------------------------------------------------------------------------------------------
// The engine.

namespace {

using Kind = Workload::Kind;

// One activation frame (a Cilk "thread" instance) of the implicit dag. Generated on the fly:
// only frames that are live (running, on a deque, or waiting at a sync) exist.
struct Frame {
    Kind kind = Kind::Fib;
    int n = 0, k = 0, r = 0;
    std::int64_t w = 1;
    std::int64_t unit = 1;          // steps per unit of work (inherited by children)
    const Workload* seq = nullptr;  // Seq: the phase list
    int pc = 0, i = 0;
    std::int64_t work_left = 0;     // steps left in the current work block
    int pending = 0;                // spawned children not yet returned
    bool waiting = false;           // suspended at a sync with pending children
    Frame* parent = nullptr;
};

class FramePool {
public:
    Frame* make(const Frame& proto) {
        Frame* f;
        if (!free_.empty()) { f = free_.back(); free_.pop_back(); }
        else { store_.emplace_back(); f = &store_.back(); }
        *f = proto;
        return f;
    }
    void drop(Frame* f) { free_.push_back(f); }
private:
    std::deque<Frame> store_;
    std::vector<Frame*> free_;
};

Frame proto_of(const Workload& w) {
    Frame f;
    f.kind = w.kind; f.n = w.n; f.k = w.k; f.r = w.r; f.w = w.w; f.unit = w.unit;
    if (w.kind == Kind::Seq) f.seq = &w;
    return f;
}

enum class Act { Work, Spawn, Sync, Return };

// Advances a frame to its next action. For Spawn, `child` is filled in.
Act advance(Frame& f, Frame& child) {
    switch (f.kind) {
        case Kind::Fib:
            switch (f.pc) {
                case 0: f.pc = 1; f.work_left = f.unit; return Act::Work;
                case 1: if (f.n < 2) return Act::Return;
                        f.pc = 2; child = Frame{}; child.kind = Kind::Fib; child.n = f.n - 1; child.unit = f.unit;
                        return Act::Spawn;
                case 2: f.pc = 3; child = Frame{}; child.kind = Kind::Fib; child.n = f.n - 2; child.unit = f.unit;
                        return Act::Spawn;
                case 3: f.pc = 4; return Act::Sync;
                case 4: f.pc = 5; f.work_left = f.unit; return Act::Work;
                default: return Act::Return;
            }
        case Kind::Loopy:  // for i < n: (1 step of loop overhead) spawn leaf(L); sync
            switch (f.pc) {
                case 0: if (f.i < f.n) { f.pc = 1; f.work_left = f.unit; return Act::Work; }
                        f.pc = 2; return Act::Sync;
                case 1: ++f.i; f.pc = 0; child = Frame{}; child.kind = Kind::Leaf; child.w = f.w; child.unit = f.unit;
                        return Act::Spawn;
                default: return Act::Return;
            }
        case Kind::Leaf:
            if (f.pc == 0) { f.pc = 1; f.work_left = f.w * f.unit; return Act::Work; }
            return Act::Return;
        case Kind::Knary:  // node work; r children one after another (spawn; sync); k-r in parallel; sync
            for (;;) switch (f.pc) {
                case 0: f.pc = 1; f.work_left = f.w * f.unit; return Act::Work;
                case 1: if (f.n <= 1) return Act::Return;
                        f.i = 0; f.pc = 2; break;
                case 2: if (f.i < f.r) { ++f.i; f.pc = 3; child = f; child.n = f.n - 1; child.pc = 0; child.i = 0;
                                         child.pending = 0; child.waiting = false; return Act::Spawn; }
                        f.pc = 4; break;
                case 3: f.pc = 2; return Act::Sync;
                case 4: if (f.i < f.k) { ++f.i; child = f; child.n = f.n - 1; child.pc = 0; child.i = 0;
                                         child.pending = 0; child.waiting = false; return Act::Spawn; }
                        f.pc = 5; return Act::Sync;
                default: return Act::Return;
            }
        case Kind::Seq:  // spawn phase m; sync; ...
            if (f.pc % 2 == 1) { ++f.pc; return Act::Sync; }
            if (static_cast<std::size_t>(f.pc / 2) < f.seq->phases.size()) {
                child = proto_of(f.seq->phases[static_cast<std::size_t>(f.pc / 2)]);
                ++f.pc;
                return Act::Spawn;
            }
            return Act::Return;
    }
    return Act::Return;
}

enum class ListId : std::uint8_t { Active, SleepWork, SleepIdle };

struct Worker {
    Frame* cur = nullptr;
    std::vector<Frame*> dq;  // [head, size): head = top (oldest, stolen), back = bottom (newest)
    std::size_t head = 0;
    int steal_left = 0;      // >0: in the middle of a steal attempt
    int stall = 0;           // steps lost to the estimator (est_cost)
    std::int64_t slept_at = 0;  // when it last went to sleep (park_valve)
    bool valve = false;      // woken by the park valve: may not sleep before its next successful steal
    std::int64_t idle_steps = 0;  // consecutive steps without work (idle_block)
    int busy_cycle = -1;     // the last measurement window (Job::window) in which it was inside a task
    ListId list = ListId::SleepIdle;
    std::size_t pos = 0;
    bool has_work() const { return cur != nullptr || head < dq.size(); }
};

struct Job {
    int id = 0;
    JobSpec spec;
    std::unique_ptr<Estimator> est;
    std::vector<Worker> workers;
    std::vector<int> lists[3];  // Active, SleepWork, SleepIdle worker ids
    int allot = 0, desire = 1;
    bool started = false, done = false;
    std::int64_t start = 0, finish = -1, work_done = 0;
    // current cycle: processor-steps used, steps of dag work, steps; for the clocks measure the
    // processor-steps the job's threads were allowed (its allotment: the real runtime has P
    // threads, however few workers the simulator has created yet), and whether the allotment was
    // below P (the shim's hooks timing) at any step of it
    std::int64_t cyc_usage = 0, cyc_busy = 0, cyc_steps = 0, cyc_allowed = 0;
    bool cyc_throttled = false;
    // Confined, the timed measure is the hooks' wall-clock intervals: cyc_wall = worker-steps
    // inside a task, run or not (time-sliced out on the job's shared CPUs still counts), and
    // cyc_workers = workers inside a task at some step of the cycle (the shim's "threads that
    // did any work", before the cap at the allotment).
    std::int64_t cyc_wall = 0;
    int cyc_workers = 0;
    // lending while quiet (Config::lend)
    std::int64_t quiet_steps = 0;   // consecutive quiet steps
    int steals_found = 0;           // steals that found work during the current step
    bool lent = false;
    int desire_lent = 1;            // the desire published before lending, asked back on reclaim
    // lifetime
    std::int64_t sum_allot = 0, sum_usage = 0, life_steps = 0;
    std::int64_t allprocs = -1;
    int cycles = 0, cycles_to_P = -1;
    int window = 0;  // measurement windows begun (estimates and reclaims): Worker::busy_cycle
    std::int64_t next_wake = 0;

    int awake() const { return static_cast<int>(lists[0].size()); }
    // Is there work a thief could get (a deque entry, or a sleeping worker with work to wake)?
    bool stealable() const {
        if (!lists[1].empty()) return true;
        for (int wid : lists[0]) {
            const Worker& w = workers[static_cast<std::size_t>(wid)];
            if (w.head < w.dq.size()) return true;
        }
        return false;
    }
};

class Engine {
public:
    explicit Engine(const Config& cfg) : cfg_(cfg), rng_(cfg.seed) {
        if (cfg_.P < 1) cfg_.P = 1;
        if (cfg_.est_cycle < 1) cfg_.est_cycle = 1;
        if (cfg_.steal_cost < 1) cfg_.steal_cost = 1;
    }

    std::function<void(std::int64_t t)> on_departure;  // churn hook

    void add(const JobSpec& s) {
        auto j = std::make_unique<Job>();
        j->id = static_cast<int>(jobs_.size());
        j->spec = s;
        pending_.push_back(j.get());
        std::stable_sort(pending_.begin(), pending_.end(),
                         [](const Job* a, const Job* b) { return a->spec.arrival < b->spec.arrival; });
        jobs_.push_back(std::move(j));
    }

    Result run();

private:
    // -- worker lists --
    void list_move(Job& j, int wid, ListId to) {
        Worker& w = j.workers[static_cast<std::size_t>(wid)];
        std::vector<int>& from = j.lists[static_cast<int>(w.list)];
        int last = from.back();
        from[w.pos] = last;
        j.workers[static_cast<std::size_t>(last)].pos = w.pos;
        from.pop_back();
        std::vector<int>& dst = j.lists[static_cast<int>(to)];
        w.list = to;
        w.pos = dst.size();
        dst.push_back(wid);
    }
    int new_worker(Job& j, ListId l) {
        int id = static_cast<int>(j.workers.size());
        j.workers.emplace_back();
        Worker& w = j.workers.back();
        w.list = l;
        w.pos = j.lists[static_cast<int>(l)].size();
        j.lists[static_cast<int>(l)].push_back(id);
        return id;
    }
    void put_to_sleep(Job& j, int wid) {
        Worker& w = j.workers[static_cast<std::size_t>(wid)];
        w.steal_left = 0;
        w.slept_at = now_;
        list_move(j, wid, w.has_work() ? ListId::SleepWork : ListId::SleepIdle);
    }

    // -- job lifecycle --
    void start_job(Job& j, std::int64_t t);
    void finish_job(Job& j, std::int64_t t);
    void estimate(Job& j, std::int64_t t);
    bool use_clocks(const Job& j) const;
    void publish_desire(Job& j, int d);
    void follow_quiet(Job& j, int working, std::int64_t t);
    bool others_deprived(const Job& j) const;
    int wake_target(const Job& j) const;
    bool sleeps_over_allotment() const { return !cfg_.confine; }
    void pick_confined(const Job& j);
    void apply_dp();
    template <class F> void timed_dp(F&& f);

    // -- one step of one worker; returns true if it executed a unit of work --
    bool step_worker(Job& j, int wid);
    void steal(Job& j, int wid);

    Config cfg_;
    std::mt19937_64 rng_;
    FramePool pool_;
    std::vector<std::unique_ptr<Job>> jobs_;
    std::vector<Job*> pending_;   // not yet arrived, by arrival
    std::vector<Job*> queued_;    // arrived, waiting for a static allocation
    std::vector<Job*> running_;
    std::vector<apshim::gat::DpJob> dp_;
    std::vector<Job*> dp_owner_;  // dp_[i] belongs to dp_owner_[i]
    std::uint64_t order_ = 0;
    std::int64_t now_ = 0;
    int static_free_ = 0;
    std::vector<double> dp_ns_;
    std::int64_t dp_calls_ = 0, dp_viol_ = 0;
    std::vector<TraceRow> trace_;
    std::vector<TimelineRow> timeline_;
    std::vector<int> snapshot_;

    void sample_timeline(std::int64_t t, double busy_avg);
};

template <class F>
void Engine::timed_dp(F&& f) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    auto t1 = std::chrono::steady_clock::now();
    dp_ns_.push_back(static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count()));
    ++dp_calls_;
    if (!apshim::gat::dp_check(dp_, cfg_.P).ok()) ++dp_viol_;
    apply_dp();
}

void Engine::apply_dp() {
    for (std::size_t i = 0; i < dp_.size(); ++i) dp_owner_[i]->allot = dp_[i].allotment;
}

void Engine::sample_timeline(std::int64_t t, double busy_avg) {
    TimelineRow row{t, static_cast<int>(running_.size()), 0, 0, 0, busy_avg, 0, 0, 0, 0, true, true};
    int max_allot = 0, min_deprived = -1;
    for (const Job* j : running_) {
        row.sum_desire += j->desire;
        row.sum_allot += j->allot;
        row.awake += j->awake();
        max_allot = std::max(max_allot, j->allot);
        if (j->allot < j->desire) {
            ++row.deprived;
            min_deprived = min_deprived < 0 ? j->allot : std::min(min_deprived, j->allot);
        }
        row.over += std::max(0, j->awake() - j->allot);
        row.under += std::max(0, j->allot - j->awake());
    }
    row.spread = min_deprived < 0 ? 0 : max_allot - min_deprived;
    if (cfg_.static_alloc == 0) {
        apshim::gat::DpCheck chk = apshim::gat::dp_check(dp_, cfg_.P);
        row.fair = chk.fair;
        row.efficient = chk.efficient;
    }
    timeline_.push_back(row);
}

void Engine::start_job(Job& j, std::int64_t t) {
    j.started = true;
    j.start = t;
    j.est = make_estimator(cfg_.policy);
    j.workers.reserve(static_cast<std::size_t>(cfg_.static_alloc > 0 ? cfg_.static_alloc : 4));
    int w0 = new_worker(j, ListId::Active);
    j.workers[static_cast<std::size_t>(w0)].cur = pool_.make(proto_of(j.spec.work));
    j.next_wake = t;
    if (cfg_.static_alloc > 0) {
        j.allot = j.desire = cfg_.static_alloc;
        static_free_ -= cfg_.static_alloc;
    } else {
        j.desire = cfg_.join_desire == Config::Join::AtP ? cfg_.P : 1;
        if (j.spec.limit > 0) j.desire = std::min(j.desire, j.spec.limit);
        dp_.push_back({j.desire, 0, order_++});
        dp_owner_.push_back(&j);
        std::size_t idx = dp_.size() - 1;
        timed_dp([&] { apshim::gat::dp_grow(dp_, cfg_.P, idx); });
    }
    running_.push_back(&j);
}

void Engine::finish_job(Job& j, std::int64_t t) {
    j.done = true;
    j.finish = t;
    for (Worker& w : j.workers) { w.dq.clear(); w.dq.shrink_to_fit(); }
    if (cfg_.static_alloc > 0) {
        static_free_ += cfg_.static_alloc;
    } else {
        for (std::size_t i = 0; i < dp_.size(); ++i)
            if (dp_owner_[i] == &j) {
                dp_.erase(dp_.begin() + static_cast<long>(i));
                dp_owner_.erase(dp_owner_.begin() + static_cast<long>(i));
                break;
            }
        timed_dp([&] { apshim::gat::dp_shrink(dp_, cfg_.P); });
    }
}

bool Engine::use_clocks(const Job& j) const {
    switch (cfg_.measure) {
        case Config::Measure::Timed: return false;
        case Config::Measure::Clocks: return true;
        case Config::Measure::Automatic: return !j.cyc_throttled;
    }
    return false;
}

void Engine::estimate(Job& j, std::int64_t t) {
    ++j.cycles;
    EstimatorInput in;
    // timed: busy = dag work, over the processor-steps used. clocks: busy = the processor-steps
    // the threads held, over those they were allowed (the shim's r = 1 - CPU time / (usage x dt)),
    // so spinning reads as busy and a blocked or sleeping thread as idle.
    bool clocks = use_clocks(j);
    double steps = static_cast<double>(j.cyc_steps);
    double busy = static_cast<double>(clocks ? j.cyc_usage : j.cyc_busy);
    double denom = static_cast<double>(clocks ? j.cyc_allowed : j.cyc_usage);
    in.usage = std::max<int>(1, static_cast<int>(std::lround(denom / steps)));
    if (!clocks && cfg_.confine) {
        // The shim's timed cycle (controller.cpp, slot_sampler.hpp): busy = the hooks' wall-clock
        // task intervals, usage p = min(threads that worked, allotment) >= 1, r = 1 - busy/(p dt)
        // clamped to [0, 1]. Its P threads share allot CPUs, so busy can exceed p dt: r = 0 and
        // WSAP asks p/eta, as the real traces do at allotment 1 (1.5-2.0 busy processors).
        busy = static_cast<double>(j.cyc_wall);
        in.usage = std::max(1, std::min(j.cyc_workers, std::max(1, j.allot)));
        denom = static_cast<double>(in.usage) * steps;
    }
    in.inefficiency = denom > 0 ? std::clamp(1.0 - busy / denom, 0.0, 1.0) : 0.0;
    in.busy_procs = busy / steps;
    in.allotment = j.allot;
    in.P = cfg_.P;
    in.eta = cfg_.eta;
    int d = j.est->next_desire(in);
    if (j.spec.limit > 0) d = std::min(d, j.spec.limit);
    // Lent and still quiet (work would have reclaimed at once): the cycle keeps publishing 1 and
    // the desire asked back stays the one lent.
    if (j.lent) d = 1;
    if (cfg_.trace) trace_.push_back({t, j.id, in.inefficiency, in.usage, d, j.allot, clocks, TraceRow::Event::Estimate});
    j.cyc_usage = j.cyc_busy = j.cyc_steps = j.cyc_allowed = j.cyc_wall = 0;
    j.cyc_workers = 0;
    j.cyc_throttled = false;
    ++j.window;
    if (cfg_.est_cost > 0 && !j.lists[0].empty()) {
        // The estimate's own cost: est_cost steps of one random awake worker, capped at half a
        // cycle (a background thread time-sharing with a worker) so that a tiny est_cycle slows
        // the job down but never starves it. A fractional charge (est_cycle 1) is paid with that
        // probability, so the expected cost stays est_cycle/2.
        std::uniform_int_distribution<std::size_t> pick(0, j.lists[0].size() - 1);
        Worker& w = j.workers[static_cast<std::size_t>(j.lists[0][pick(rng_)])];
        double charge = std::min<double>(cfg_.est_cost, cfg_.est_cycle / 2.0);
        int add = static_cast<int>(charge);
        if (charge > add && std::uniform_real_distribution<double>(0.0, 1.0)(rng_) < charge - add) ++add;
        w.stall = std::min(w.stall + add, std::max(1, cfg_.est_cycle / 2));
    }
    if (cfg_.static_alloc > 0) return;
    publish_desire(j, d);
}

// The job's new desire into the table: DP recomputes every allotment (the real dp calls).
void Engine::publish_desire(Job& j, int d) {
    int old = j.desire;
    j.desire = d;
    if (d == old) return;
    for (std::size_t i = 0; i < dp_.size(); ++i)
        if (dp_owner_[i] == &j) {
            dp_[i].desire = d;
            timed_dp([&] { apshim::gat::dp_desire_changed(dp_, cfg_.P, i, old); });
            break;
        }
}

// Table::others_want_more: some other job holds less than it desires.
bool Engine::others_deprived(const Job& j) const {
    for (const Job* o : running_)
        if (o != &j && !o->done && o->allot < o->desire) return true;
    return false;
}

// Lending while quiet (shim/controller.cpp lend/reclaim). `working`: workers that executed dag
// work this step. Quiet: at most one of them, no steal found work, nothing stealable (the
// analogue of every thread outside a parallel construct). Work again asks back the desire lent
// and restarts the measurement window (so the next estimate sees the job at work).
void Engine::follow_quiet(Job& j, int working, std::int64_t t) {
    bool quiet = working <= 1 && j.steals_found == 0 && !j.stealable();
    j.steals_found = 0;
    if (!quiet) {
        j.quiet_steps = 0;
        if (!j.lent) return;
        j.lent = false;
        publish_desire(j, j.desire_lent);
        j.cyc_usage = j.cyc_busy = j.cyc_steps = j.cyc_allowed = j.cyc_wall = 0;
        j.cyc_workers = 0;
        j.cyc_throttled = false;
        ++j.window;  // no worker has worked in the new window yet
        if (cfg_.trace) trace_.push_back({t, j.id, 0.0, 0, j.desire, j.allot, false, TraceRow::Event::Reclaim});
        return;
    }
    if (++j.quiet_steps < cfg_.lend || j.lent || j.allot <= 1 || !others_deprived(j)) return;
    j.lent = true;
    j.desire_lent = j.desire;
    publish_desire(j, 1);
    if (cfg_.trace) trace_.push_back({t, j.id, 0.0, 0, j.desire, j.allot, false, TraceRow::Event::Lend});
}

// How many workers a job keeps awake: its allotment (Sen: the rest sleep at safe points), or,
// confined, every worker of its runtime (P: the shim stops no thread, it narrows their CPUs).
int Engine::wake_target(const Job& j) const {
    return cfg_.confine && cfg_.static_alloc == 0 ? cfg_.P : j.allot;
}

// Confinement: the job's awake workers share allot processors. snapshot_ (its awake workers)
// is shuffled so that its first min(allot, awake) entries are a uniformly random choice: each
// worker runs with probability min(1, allot / awake), and never more than allot run at once.
void Engine::pick_confined(const Job& j) {
    std::size_t n = snapshot_.size(), k = std::min<std::size_t>(n, static_cast<std::size_t>(std::max(1, j.allot)));
    if (k >= n) return;
    for (std::size_t i = 0; i < k; ++i) {
        std::uniform_int_distribution<std::size_t> pick(i, n - 1);
        std::swap(snapshot_[i], snapshot_[pick(rng_)]);
    }
    snapshot_.resize(k);
}

void Engine::steal(Job& j, int wid) {
    // Victims: every other awake worker, or a sleeping one with work (Sen §4.1 WSAP).
    std::size_t na = j.lists[0].size(), ns = j.lists[1].size();
    std::size_t n = na + ns;
    if (n <= 1) return;  // only ourselves
    std::uniform_int_distribution<std::size_t> pick(0, n - 1);
    std::size_t x = pick(rng_);
    int victim = x < na ? j.lists[0][x] : j.lists[1][x - na];
    if (victim == wid) return;  // a wasted attempt, as a random pick of oneself would be
    Worker& v = j.workers[static_cast<std::size_t>(victim)];
    if (v.list == ListId::SleepWork) {
        // Wake the victim, sleep ourselves: usage unchanged.
        ++j.steals_found;
        list_move(j, victim, ListId::Active);
        put_to_sleep(j, wid);
        return;
    }
    if (v.head < v.dq.size()) {
        Worker& me = j.workers[static_cast<std::size_t>(wid)];
        me.valve = false;
        me.cur = v.dq[v.head++];
        ++j.steals_found;
        if (v.head == v.dq.size()) { v.dq.clear(); v.head = 0; }
    }
}

bool Engine::step_worker(Job& j, int wid) {
    Worker* w = &j.workers[static_cast<std::size_t>(wid)];
    if (w->stall > 0) { --w->stall; return false; }
    if (w->cur == nullptr) {
        if (cfg_.idle_block > 0 && ++w->idle_steps > cfg_.idle_block && !j.stealable()) {
            put_to_sleep(j, wid);  // blocks: woken when work appears (see run())
            return false;
        }
        if (w->steal_left == 0) {
            // Before each steal attempt: sleep if the job uses more than its allotment.
            if (sleeps_over_allotment() && j.awake() > j.allot && !w->valve) { put_to_sleep(j, wid); return false; }
            w->steal_left = cfg_.steal_cost;
        }
        if (--w->steal_left == 0) steal(j, wid);
        return false;
    }
    w->idle_steps = 0;
    Frame child;
    for (;;) {
        Frame* f = w->cur;
        if (f->work_left > 0) {
            --f->work_left;
            ++j.work_done;
            return true;
        }
        // A task boundary: the only place a working processor honours a sleep signal.
        if (sleeps_over_allotment() && !cfg_.outermost_only && j.awake() > j.allot) { put_to_sleep(j, wid); return false; }
        switch (advance(*f, child)) {
            case Act::Work: break;
            case Act::Spawn: {
                Frame* c = pool_.make(child);
                c->parent = f;
                ++f->pending;
                w->dq.push_back(f);
                w->cur = c;
                break;
            }
            case Act::Sync:
                if (f->pending > 0) { f->waiting = true; w->cur = nullptr; return false; }
                break;
            case Act::Return: {
                Frame* p = f->parent;
                pool_.drop(f);
                w->cur = nullptr;
                if (p == nullptr) { j.done = true; return false; }
                --p->pending;
                if (w->head < w->dq.size() && w->dq.back() == p) {
                    w->dq.pop_back();
                    if (w->head == w->dq.size()) { w->dq.clear(); w->head = 0; }
                    w->cur = p;
                } else if (p->waiting && p->pending == 0) {
                    p->waiting = false;  // the last child to return resumes its parent
                    w->cur = p;
                } else {
                    return false;
                }
                break;
            }
        }
    }
}

Result Engine::run() {
    static_free_ = cfg_.static_alloc > 0 ? cfg_.P : 0;
    Result res;
    std::int64_t t = 0;
    double sum_alloc = 0, sum_busy = 0, window_busy = 0;
    std::int64_t oversub_steps = 0, window_steps = 0;
    std::size_t next_pending = 0;
    std::uniform_real_distribution<double> coin(0.0, 1.0);
    while (next_pending < pending_.size() || !queued_.empty() || !running_.empty()) {
        if (t >= cfg_.max_steps) throw std::runtime_error("simulation exceeded max_steps");
        while (next_pending < pending_.size() && pending_[next_pending]->spec.arrival <= t) {
            Job* j = pending_[next_pending++];
            if (cfg_.static_alloc > 0 && !cfg_.native) queued_.push_back(j);
            else start_job(*j, t);
        }
        while (!queued_.empty() && static_free_ >= std::min(cfg_.static_alloc, cfg_.P) ) {
            Job* j = queued_.front();
            queued_.erase(queued_.begin());
            start_job(*j, t);
        }
        if (running_.empty()) {  // idle machine: jump to the next arrival
            if (next_pending < pending_.size()) t = std::max(t + 1, pending_[next_pending]->spec.arrival);
            else ++t;
            continue;
        }
        // Wake workers up to the allotment: sleeping-with-work first, then idle, then new ones.
        int total_awake = 0;
        now_ = t;
        for (Job* j : running_) {
            if (cfg_.park_valve > 0)  // the park valve: idle sleepers past their time run one more task
                for (std::size_t i = 0; i < j->lists[2].size();) {
                    int wid = j->lists[2][i];
                    Worker& w = j->workers[static_cast<std::size_t>(wid)];
                    if (t - w.slept_at >= cfg_.park_valve) { w.valve = true; list_move(*j, wid, ListId::Active); }
                    else ++i;
                }
            while (j->awake() < wake_target(*j) && (cfg_.wake_cost == 0 || t >= j->next_wake)) {
                if (!j->lists[1].empty()) list_move(*j, j->lists[1].back(), ListId::Active);
                else if (cfg_.idle_block > 0 && !j->stealable()) break;  // idle workers stay blocked
                else if (!j->lists[2].empty()) list_move(*j, j->lists[2].back(), ListId::Active);
                else new_worker(*j, ListId::Active);
                if (cfg_.wake_cost > 0) j->next_wake = t + cfg_.wake_cost;
            }
            // Confined, a job's workers compete for its allotment's processors only.
            total_awake += cfg_.confine ? std::min(j->awake(), std::max(1, j->allot)) : j->awake();
        }
        // Process control: more awake workers than processors share them (each runs with
        // probability P / awake this step). Confined jobs' CPU sets overlap only when there are
        // more jobs than P (DP keeps each at >= 1): then this applies on top of confinement.
        double run_p = total_awake > cfg_.P ? static_cast<double>(cfg_.P) / total_awake : 1.0;
        if (total_awake > cfg_.P) ++oversub_steps;
        for (Job* j : running_) {
            // Confined (the shim's wall-clock hooks): every awake worker inside a task at the
            // start of the step is busy for it, whether it runs or is time-sliced out. A thief
            // (or a worker asleep / blocked) is outside any task and counts nothing.
            std::int64_t in_task = 0;
            if (cfg_.confine)
                for (int wid : j->lists[0]) {
                    Worker& w = j->workers[static_cast<std::size_t>(wid)];
                    if (w.cur == nullptr) continue;
                    ++in_task;
                    if (w.busy_cycle != j->window) { w.busy_cycle = j->window; ++j->cyc_workers; }
                }
            snapshot_ = j->lists[0];
            if (cfg_.confine) pick_confined(*j);
            std::int64_t usage = 0, busy = 0;
            for (int wid : snapshot_) {
                if (j->done) break;
                Worker& w = j->workers[static_cast<std::size_t>(wid)];
                if (w.list != ListId::Active) continue;
                if (run_p < 1.0 && coin(rng_) >= run_p) continue;
                ++usage;
                if (step_worker(*j, wid)) ++busy;
            }
            j->cyc_wall += in_task;
            if (cfg_.lend > 0 && cfg_.static_alloc == 0 && !j->done) follow_quiet(*j, static_cast<int>(busy), t);
            j->cyc_usage += usage;
            j->cyc_busy += busy;
            ++j->cyc_steps;
            j->cyc_allowed += j->allot;
            if (j->allot < cfg_.P) j->cyc_throttled = true;
            j->sum_allot += j->allot;
            j->sum_usage += usage;
            ++j->life_steps;
            sum_alloc += j->allot;
            sum_busy += static_cast<double>(busy);
            window_busy += static_cast<double>(busy);
            if (j->allprocs < 0 && busy >= cfg_.P) j->allprocs = t + 1 - j->start;
        }
        ++t;
        // Departures, then estimates.
        std::vector<Job*> still;
        still.reserve(running_.size());
        for (Job* j : running_) {
            if (j->done) { finish_job(*j, t); if (on_departure) on_departure(t); }
            else still.push_back(j);
        }
        running_.swap(still);
        for (Job* j : running_) {
            if ((t - j->start) % cfg_.est_cycle == 0) estimate(*j, t);
            if (j->cycles_to_P < 0 && j->allot >= cfg_.P) j->cycles_to_P = j->cycles;
        }
        res.max_jobs = std::max(res.max_jobs, static_cast<int>(running_.size()));
        ++window_steps;
        if (cfg_.timeline_every > 0 && t % cfg_.timeline_every == 0) {
            sample_timeline(t, window_busy / static_cast<double>(window_steps));
            window_busy = 0;
            window_steps = 0;
        }
    }
    res.makespan = t;
    for (const auto& jp : jobs_) {
        const Job& j = *jp;
        JobResult r;
        r.id = j.id;
        r.spec = j.spec.work.text;
        r.arrival = j.spec.arrival;
        r.start = j.start;
        r.finish = j.finish;
        r.T1 = work_of(j.spec.work);
        r.Tinf = span_of(j.spec.work);
        r.work_done = j.work_done;
        r.avg_allot = j.life_steps ? static_cast<double>(j.sum_allot) / static_cast<double>(j.life_steps) : 0;
        r.avg_usage = j.life_steps ? static_cast<double>(j.sum_usage) / static_cast<double>(j.life_steps) : 0;
        r.allprocs = j.allprocs;
        r.cycles = j.cycles;
        r.cycles_to_P = j.cycles_to_P;
        res.jobs.push_back(r);
    }
    res.trace = std::move(trace_);
    res.timeline = std::move(timeline_);
    res.dp_calls = dp_calls_;
    res.dp_violations = dp_viol_;
    if (!dp_ns_.empty()) {
        double s = 0;
        for (double v : dp_ns_) s += v;
        res.dp_ns_mean = s / static_cast<double>(dp_ns_.size());
        std::sort(dp_ns_.begin(), dp_ns_.end());
        res.dp_ns_p50 = dp_ns_[dp_ns_.size() / 2];
        res.dp_ns_p99 = dp_ns_[static_cast<std::size_t>(0.99 * static_cast<double>(dp_ns_.size() - 1))];
        res.dp_ns_max = dp_ns_.back();
    }
    if (t > 0) {
        res.util_alloc = sum_alloc / (static_cast<double>(t) * cfg_.P);
        res.util_busy = sum_busy / (static_cast<double>(t) * cfg_.P);
        res.oversub = static_cast<double>(oversub_steps) / static_cast<double>(t);
    }
    return res;
}

}  // namespace

Result simulate(const Config& cfg, const std::vector<JobSpec>& jobs) {
    Engine e(cfg);
    for (const JobSpec& j : jobs) e.add(j);
    return e.run();
}

Result simulate_churn(const Config& cfg, int concurrent, int total) {
    Engine e(cfg);
    std::mt19937_64 rng(cfg.seed ^ 0x9e3779b97f4a7c15ULL);
    // A mix of Sen's programs, small enough that a few hundred of them fit in seconds.
    auto random_job = [&rng](std::int64_t at) {
        std::uniform_int_distribution<int> kind(0, 3);
        std::string s;
        switch (kind(rng)) {
            case 0: s = "fib:" + std::to_string(std::uniform_int_distribution<int>(15, 19)(rng)); break;
            case 1: s = "loopy:" + std::to_string(std::uniform_int_distribution<int>(8, 64)(rng)) + ":" +
                        std::to_string(std::uniform_int_distribution<int>(200, 800)(rng)); break;
            case 2: s = "knary:" + std::to_string(std::uniform_int_distribution<int>(5, 7)(rng)) + ":4:" +
                        std::to_string(std::uniform_int_distribution<int>(0, 2)(rng)); break;
            default: s = "knary:6:4:4+knary:6:5:0"; break;  // serial then parallel phase
        }
        JobSpec j;
        j.work = parse_workload(s);
        j.arrival = at;
        return j;
    };
    int arrived = 0;
    for (; arrived < std::min(concurrent, total); ++arrived) e.add(random_job(0));
    std::exponential_distribution<double> gap(1.0 / 200.0);  // mean 200 steps between a departure and its replacement
    e.on_departure = [&](std::int64_t t) {
        if (arrived >= total) return;
        ++arrived;
        e.add(random_job(t + static_cast<std::int64_t>(gap(rng))));
    };
    return e.run();
}

}  // namespace apshim::sim
