#include "shim/controller.hpp"

#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

#include "adapters/common/clock.hpp"
#include "gat/table.hpp"
#include "shim/confine.hpp"
#include "shim/confine_check.hpp"
#include "shim/estimators/estimator.hpp"
#include "shim/hold_check.hpp"
#include "shim/idle_check.hpp"
#include "shim/log.hpp"
#include "shim/process_cpu.hpp"
#include "shim/trace.hpp"
#include "shim/width_check.hpp"

namespace apshim {

struct Controller::Impl {
    std::unique_ptr<gat::Table> table;
    std::unique_ptr<Estimator> estimator;
    Trace trace;
    int slot = -1;
    int P = 1;
    int allotment = 1;
    std::uint64_t cycle_ns = 5000000;
    std::uint64_t t0 = 0, last = 0;
    int failed_updates = 0;
    gat::LockHolder last_holder;  // the lock's holder at the last look while updates failed
    gat::ProcSet procs;  // the table processors the job holds (its allotment's; confine.hpp)
    gat::ProcSet idle;   // the table processors no job holds (APSHIM_USE_IDLE: usable too)
    // Per adapters_ slot, the busy time per cycle that the split follows: a moving average over
    // about kSplitCycles cycles (split_allotment says why), 0 before the slot's first sample.
    std::uint64_t split_busy[kMaxAdapters] = {};
    // The split in force (split_allotment): its shares in the order of the adapters present, how
    // many there were, and the allotment split.
    int split[kMaxAdapters] = {};
    int split_n = 0, split_total = 0;
    pid_t tid = 0;       // the controller thread's own: it is not confined
    // Whether confinement costs the job more than the CPUs it takes (confine_check.hpp), fed
    // each cycle with the job's progress marks and the process's CPU time (last_cpu_ns, read
    // exactly: process_cpu.hpp).
    ConfineCheck check;
    ProcessCpu process_cpu;
    std::uint64_t last_cpu_ns = 0;
    bool spread_due = false;  // a start begun at the first look spreads the threads at the first cycle
    // Whether the idle processors make the job any faster (idle_check.hpp), fed each cycle with
    // its progress marks: a job they do not help keeps to its own.
    IdleCheck idle_check;
    // Whether parking alone holds the job, where confinement is off (hold_check.hpp), and whether
    // the controller said once that it does not.
    HoldCheck hold_check;
    bool told_unheld = false;
    // Whether all of its processors make the job any faster than half of them (width_check.hpp),
    // fed each cycle with its progress marks: a job faster on fewer asks for fewer.
    WidthCheck width_check;
    // The CPU quota of the job's cgroup as last read (default_processors()), re-read once a
    // second: a container resized in place (Kubernetes in-place resize) changes the table's P
    // for the jobs in it. 0 when P did not come from the quota (APSHIM_P, or set by code).
    int quota_P = 0;
    std::uint64_t next_quota_check = 0;
    // Lending while quiet (lend(), reclaim()). desire/usage: what the last cycle published while
    // not lent, asked back at reclaim; lend_ns: APSHIM_LEND_MS (0: never lend).
    std::uint64_t lend_ns = 0;
    bool lent = false;
    bool others_want_more = false;  // some co-runner has less than it desires (read each cycle)
    int desire = 1, usage = 1;
    std::uint32_t runtimes = 0;
    bool quiet_seen = false;        // the previous poll found the job quiet ...
    std::uint64_t quiet_entries = 0;  // ... with this Activity::entries total (kept while lent)
    // The row's change counter as read just before the table state the job holds now was read
    // (first_allotment, cycle, follow_table, lend, reclaim): cycle_loop waits for a change from
    // this value, so a co-runner's DP run between that read of the table and the wait is followed
    // at once. Read at the wait instead, such a change went unseen until the next cycle (once in
    // a loaded test run: a co-runner that joined just after first_allotment's update confined the
    // job only at its 10 s cycle, omp.gcc.follow).
    std::uint32_t seen = 0;
    // The widest team that spins at its meetings (Sample::spinning_team) since the
    // job last went kSpinQuietCycles cycles without one (0: it did), and the cycles without one
    // since the last (spins_beyond).
    int spinning_team = 0;
    int spinning_quiet = 0;
    bool spinning_unconfined = false;  // apply_allotment left the job unconfined for it (trace: `spinning`)
};

// Reads the table through `read` (an update() or current() of row `slot`), with the row's change
// counter read just before it; when the read succeeds (its result >= 0) that value goes into
// *seen, which cycle_loop waits to change (Impl::seen). Every read of the table state the job
// holds goes through here but first_allotment's.
template <class Read>
static int read_table(const gat::Table& table, int slot, std::uint32_t* seen, Read read) {
    std::uint32_t before = table.changes(slot);
    int a = read();
    if (a >= 0) *seen = before;
    return a;
}

// The processors the job's threads may run on: its own and, with APSHIM_USE_IDLE, the ones no job
// holds. DP decides the allotments; idle processors beyond them are used rather than left idle
// (a job alone, a serial co-runner), and the first DP run that hands them to a job takes them back
// (it wakes every job: gat/table.hpp). Its count is the active threads' too (apply_allotment), so
// the estimator measures the job at the width it really runs at.
static gat::ProcSet usable_procs(const gat::ProcSet& own, const gat::ProcSet& idle, bool use_idle) noexcept {
    return use_idle ? own | idle : own;
}

// Whether a team whose threads meet in spin-waits without a yield (BLIS's, an Eigen product's, a
// `parallel sections` region's: adapters/omp/whole_team.hpp, Sample::spinning_team) ran lately
// with more threads than the `cpus` CPUs confinement would give the job (0: none). Then the job is
// not confined, as without the shim, while such teams run: on fewer CPUs than threads each of
// their meetings waits for a kernel time slice (a team of 2 on one CPU: 4x its one-thread time,
// spinning the CPU it has), and a CPU per thread costs less CPU time in all than that. OpenMP's
// promise keeps the team's size (dyn-var off); the confinement check does not measure meanwhile
// (it sees nothing to confine), nor does parking throttle (suspend). Not with APSHIM_CONFINE_CHECK=0
// (`checked` false), which confines every throttled job whatever it costs it: the user's choice
// of the allotment over the job's time (openbabel's LU, all Eigen products, at allotment 1 used
// 1.62 CPUs so, and took 4.5 s instead of 8.2; tests/real/RESULTS.md, ninetieth session).
static bool spins_beyond(int spinning_team, int cpus, bool checked) noexcept {
    return checked && cpus > 0 && spinning_team > cpus;
}

// How often the CPU quota is re-read.
constexpr std::uint64_t kQuotaCheckNs = 1000000000ull;

// Consecutive failed table updates before the controller says so (about 1 s at 5 ms), and how
// often it looks at the lock's holder meanwhile (twice in that second: judge_stuck compares two
// looks).
constexpr int kUpdateFailuresToReport = 200;
constexpr int kHolderLookCycles = kUpdateFailuresToReport / 2;

// Joins that found the lock busy for 1 s are retried this many times in all, after a pause that
// grows with the attempt and is spread by pid so a burst of jobs does not retry in lock-step.
constexpr int kJoinAttempts = 8;
// Cycles without a team that spins at its meetings (BLIS's, a sections region's) before the job
// is confined again (spins_beyond): NumPy's products on BLIS come one region per call, with the
// interpreter's moments between them.
constexpr int kSpinQuietCycles = 4;
static std::uint64_t join_backoff_ns(int attempt) {
    std::uint64_t base = 50000000ull << std::min(attempt, 4);  // 100 ms .. 800 ms
    return base + static_cast<std::uint64_t>(getpid() % 97) * 1000000ull;
}

Controller::Controller(const Options& options) : opts_(options) {}
Controller::~Controller() = default;

void Controller::adapter_started(Adapter& a) noexcept {
    for (auto& slot : adapters_) {
        Adapter* cur = slot.load(std::memory_order_acquire);
        if (cur == &a) break;
        if (cur == nullptr) {
            Adapter* expected = nullptr;
            if (slot.compare_exchange_strong(expected, &a) || expected == &a) break;
        }
    }
    // After let_adapters_go: a runtime that starts once the controller has given up (a second
    // one, after a failed join or at exit) would otherwise wait for a first allotment that never
    // comes, timed until the process ends. Seq_cst on both sides: either that loop sees this
    // adapter in its slot or this sees the flag (a second release does nothing more).
    if (adapters_let_go_.load()) {
        a.release();
        return;
    }
    if (!started_.load(std::memory_order_acquire)) start_thread();
}

void Controller::start_thread() noexcept {
    std::lock_guard<std::mutex> g(mutex_);
    if (started_.load() || stopping_.load()) return;
    // The controller must never take the host's asynchronous signals: block them all. The
    // synchronous fault signals stay open: they only ever go to the thread that faulted, and
    // threads a runtime creates from the controller inherit this mask, so a program's SIGSEGV
    // handler (a crash reporter) still runs for a fault in such a thread instead of the kernel
    // killing the process past a blocked handler.
    sigset_t all, old;
    sigfillset(&all);
    for (int sync_signal : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS}) sigdelset(&all, sync_signal);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_getname_np(pthread_self(), host_name_, sizeof host_name_);
    pthread_t t;
    int rc = pthread_create(&t, nullptr, &Controller::thread_main, this);
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    if (rc != 0) {
        log(LogLevel::warn, "cannot start the controller thread (error %d); running unthrottled", rc);
        started_.store(true);  // do not retry on every hook
        return;
    }
    thread_ = t;
    thread_joinable_ = true;
    started_.store(true, std::memory_order_release);
}

void* Controller::thread_main(void* self) noexcept {
    pthread_setname_np(pthread_self(), "apshim-ctl");
    static_cast<Controller*>(self)->run();
    return nullptr;
}

namespace {

// While alive, the controller thread carries the name of the thread that started it, so that
// threads a runtime creates from here (TBB workers woken by set_active) look like its own. Its
// signal mask stays closed (all but the fault signals): with any other signal unblocked, even
// for a moment each cycle, the controller takes process-directed signals that the program blocks in its own threads to
// sigwait() for them (oneTBB's test_tbb_fork waited for ever for a SIGCHLD and a SIGALRM the
// controller had taken; tests/peer/RESULTS.md). Threads created from here start with those
// signals blocked, so process-directed signals still go to the program's own threads.
class HostIdentity {
public:
    explicit HostIdentity(const char* name) { pthread_setname_np(pthread_self(), name); }
    ~HostIdentity() { pthread_setname_np(pthread_self(), "apshim-ctl"); }
    HostIdentity(const HostIdentity&) = delete;
    HostIdentity& operator=(const HostIdentity&) = delete;
};

// Sleeps until `deadline_ns` (CLOCK_MONOTONIC) or until *word changes from `seen`.
void wait_until(std::atomic<std::uint32_t>& word, std::uint32_t seen, std::uint64_t deadline_ns) {
    std::uint64_t now = now_ns();
    if (now >= deadline_ns) return;
    std::uint64_t d = deadline_ns - now;
    timespec ts{static_cast<time_t>(d / 1000000000ull), static_cast<long>(d % 1000000000ull)};
    syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, seen, &ts, nullptr, 0);
}

void wake(std::atomic<std::uint32_t>& word) {
    word.fetch_add(1);
    syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}

}  // namespace

// The controller thread's life: set up and open the table (under the mutex), join it (without:
// see join_table), then, under the mutex again, the first allotment and the cycles.
void Controller::run() noexcept {
    std::unique_lock<std::mutex> g(mutex_);
    if (!open_table()) return let_adapters_go();
    g.unlock();
    bool joined = join_table();
    g.lock();
    if (stopping_.load()) return;  // shutdown() leaves the table if we joined
    if (!joined) return let_adapters_go();
    first_allotment();
    cycle_loop(g);
}

// Mutex held. Every adapter runs unthrottled for good, and any that starts later (adapter_started
// lets it go at once): at shutdown, or where there is no table to
// join (said once), where they would otherwise wait for a first allotment that never comes, and
// a team's hooks, timed from its first fork until it comes (omp_adapter.cpp: note_fork), would
// time every task for the program's life.
void Controller::let_adapters_go() noexcept {
    adapters_let_go_.store(true);
    for (auto& slot : adapters_)
        if (Adapter* a = slot.load()) a->release();
}

// Mutex held. The thread's own state, the estimator and the table (opening it takes no lock).
bool Controller::open_table() noexcept {
    if (!impl_) impl_ = std::make_unique<Impl>();
    Impl& s = *impl_;
    s.tid = static_cast<pid_t>(syscall(SYS_gettid));
    // A thread bound by OMP_PROC_BIND may have started us: the controller runs anywhere the
    // process may (and is never confined with the job: it must wake every est_cycle).
    confine::reset_thread_mask();
    s.estimator = make_estimator(opts_.policy);
    std::string err;
    gat::CreateParams params{opts_.P, static_cast<std::uint32_t>(std::lround(opts_.est_cycle_ms * 1000))};
    if (!s.table) s.table = gat::Table::open(opts_.gat, params, err);
    if (!s.table) {
        APSHIM_LOG_ONCE(LogLevel::warn, "%s; running unthrottled", err.c_str());
        return false;
    }
    s.P = s.table->processors();
    s.cycle_ns = static_cast<std::uint64_t>(s.table->est_cycle_ms() * 1e6);
    s.lend_ns = static_cast<std::uint64_t>(opts_.lend_ms * 1e6);
    s.check.set_bounded(opts_.check_bound);
    s.check.seed_looks(static_cast<std::uint32_t>(getpid()) * 2654435761u ^ static_cast<std::uint32_t>(now_ns()));
    table_P_.store(s.P, std::memory_order_release);
    // Follow the quota only where P came from it (an embedding program may set its own P).
    if (!opts_.P_from_env && opts_.P == default_processors()) s.quota_P = opts_.P;
    table_cycle_ns_.store(s.cycle_ns, std::memory_order_release);
    if (opts_.P_from_env && s.P != opts_.P)
        log(LogLevel::info, "APSHIM_P=%d ignored: the table %s was created with P=%d", opts_.P, s.table->path().c_str(), s.P);
    return true;
}

// Mutex NOT held: a join waits up to 1 s for the table lock, and fork() in the host waits for
// the mutex (prepare handler), so holding it here made a host's fork() wait for another
// process's hold on the table. Nothing here calls an adapter (what the mutex keeps from
// straddling a fork); a child forked meanwhile forgets our slot (after_fork_child), and
// shutdown() joins this thread before it reads the slot. A lone job joins at the width its
// runtime already runs (one thread per core: oneTBB's workers, the first OpenMP team), not at
// Sen's desire 1 (§6.2), and the first measured cycle brings the desire to what it uses. Joining
// at 1 made every program's second OpenMP region narrower than its first before anything was
// measured (LLVM's kmp_set_defaults_lock_bug counts on two regions in a row having the same
// team; tests/peer/RESULTS.md) and cost every lone job log2(P) cycles of climbing. DP still
// gives a newcomer no more than its fair share. A burst of hundreds of jobs starting at once can
// keep the lock busy past join's 1 s: try again a few times (the job runs unthrottled
// meanwhile) instead of staying out of the table for its whole life. A job stopped or frozen while
// it holds the lock (SIGSTOP, a cgroup freezer, mid-update) holds it until it runs again: for as
// long as that holder is stuck (judge_stuck), keep trying (said once), so that the job joins then.
bool Controller::join_table() noexcept {
    Impl& s = *impl_;
    std::string err;
    int slot = s.table->join(s.P, opts_.eta, err);
    bool said = false;
    gat::LockHolder last;
    for (int attempt = 1; slot == gat::Table::kJoinBusy; ++attempt) {
        last = s.table->lock_holder(last);
        if (attempt >= kJoinAttempts && !last.stuck) break;
        if (last.stuck && !said) {
            log(LogLevel::warn, "table %s: its lock is held by %s; running unthrottled until that job runs again",
                s.table->path().c_str(), gat::describe_holder(last).c_str());
            said = true;
        }
        std::uint32_t seen = wake_.load();
        wait_until(wake_, seen, now_ns() + join_backoff_ns(attempt));
        if (stopping_.load()) return false;
        slot = s.table->join(s.P, opts_.eta, err);
    }
    s.slot = slot;
    if (slot < 0) {
        APSHIM_LOG_ONCE(LogLevel::warn, "%s; running unthrottled", err.c_str());
        return false;
    }
    return true;
}

// Mutex held. DP's answer to the join (its fair share; 1 if the lock is busy now, as a safe
// start) to every adapter, and the start of every adapter's measurement window.
void Controller::first_allotment() noexcept {
    Impl& s = *impl_;
    if (!opts_.trace.empty()) s.trace.open(opts_.trace);
    // Not through read_table: kept even when the lock is busy (allotment 1 meanwhile), so that the
    // first wait follows only a change made after this, as the first cycle reads the rest.
    s.seen = s.table->changes(s.slot);
    int answered = s.table->update(s.slot, s.P, s.P, s.cycle_ns, &s.procs, 0, &s.idle);
    s.allotment = std::max(1, answered);
    s.desire = s.usage = s.P;
    read_others();
    confine::publish_placement(running_procs(), s.P);  // before the first limit: who holds it (parking.hpp)
    {
        HostIdentity host(host_name_);
        for (auto& slot : adapters_)
            if (Adapter* a = slot.load()) a->set_active(s.allotment);
    }
    // Busy time from before the controller existed (threads ran while the table was being
    // joined) would inflate the first cycle.
    for (auto& slot : adapters_)
        if (Adapter* a = slot.load()) a->sample();
    s.t0 = s.last = now_ns();
    // Likewise the CPU time from before it (loading, reading input: 25 ms of a gm convert's, which
    // its start counted as run in its first cycle).
    s.last_cpu_ns = s.process_cpu.read_ns();
    // A job whose allotment confines it starts its confinement check's start now, not at the
    // first cycle's end: that cycle runs unconfined either way (ConfineCheck::begin), and now runs
    // as the rest of the start does, without parking (apply_allotment's suspension).
    if (checking()) {
        bool markable = false;
        for (auto& slot : adapters_)
            if (Adapter* a = slot.load()) markable = markable || a->marks_progress();
        s.check.begin(s.t0, allotment_confines(), markable);
        if (s.check.starting()) {
            confine::suspend(true);
            // Spread at the first cycle's end, as a start begun there is: the first team's
            // threads may not all exist yet (a CI run spread 1 thread of 2 here, omp.gcc.handover).
            s.spread_due = true;
        }
    }
    // A job that does not start (the check off, or none of its runtimes counts marks: oneTBB
    // alone) is confined at this first look, as its first cycle's end would confine it, where the
    // table answered. That cycle ran unconfined before: 2 CPUs for 200 ms at est_cycle 200 ms
    // (shim.first_look), on 16 CPUs 75 ms of CPU beyond one CPU at the default 5 ms (NPB EP.W with
    // the check off used 1.06-1.07 CPUs at allotment 1, GraphicsMagick, whose first cycles read its
    // input serially, 1.02: bench/results/2026-12-05e-device16core).
    if (answered > 0 && !s.check.starting()) apply_allotment(true);
    log(LogLevel::debug, "controller up: P=%d est_cycle=%.2f ms eta=%.2f policy=%s", s.P, s.cycle_ns / 1e6, opts_.eta,
        s.estimator->name());
    if (const char* why = confine::why_off())
        log(confine::off_by_fault() ? LogLevel::warn : LogLevel::info,
            "not confining threads to the allotment's CPUs: %s; throttling by parking only", why);
}

// How long one try to follow a change waits for the table's lock (cycle_loop tries again).
constexpr std::uint64_t kFollowLockNs = 1000000ull;

// Mutex held except while sleeping between cycles: one cycle every est_cycle until shutdown.
// Between cycles the thread sleeps on its row's change counter: when another job's DP run
// changed our allotment or processors (a job left, went idle, arrived), it follows at once
// (follow_table) instead of at its next cycle, and co-runners take freed CPUs within about
// a millisecond (bench/scripts/reaction.py). While lending could help a co-runner it also wakes
// every APSHIM_LEND_MS to see whether the job went quiet (poll_quiet), and a hook that asks
// lent processors back wakes it through the same counter (wake_to_reclaim).
void Controller::cycle_loop(std::unique_lock<std::mutex>& g) noexcept {
    Impl& s = *impl_;
    cycling_table_.store(s.table.get(), std::memory_order_release);
    std::uint64_t next = s.last + s.cycle_ns;
    bool behind = false;  // a change not followed yet: the table's lock was busy (follow_table)
    int early_cycles = 0;  // early cycles (below) since the last cycle end
    for (;;) {
        int slot = s.slot;  // update() may move us to another row (re-join)
        cycling_slot_.store(slot, std::memory_order_release);
        // Read before the check (shutdown() stops, then bumps), and before the table state we hold
        // was read (Impl::seen).
        std::uint32_t seen = s.seen;
        if (stopping_.load(std::memory_order_acquire)) break;
        g.unlock();
        std::uint64_t before = now_ns();
        bool polling = lending_worthwhile();
        if (!polling) s.quiet_seen = false;  // quiet only counts across consecutive polls
        std::uint64_t until = polling ? std::min(next, before + s.lend_ns) : next;
        // A bounded window of the check is open (its start, a probe, a confirmation's unconfined
        // cycle): peek at the CPU time it used every ConfineCheck::kPeekNs, to end the cycle when
        // the window has spent its bound. At most kMaxEarlyCycles between cycle ends: an early
        // cycle closes the window (window_spent says why, and when it may not), and this keeps one
        // that did not close from turning every peek into a cycle.
        bool peeking = early_cycles < ConfineCheck::kMaxEarlyCycles && s.check.window_bounded() && checking();
        if (peeking) until = std::min(until, before + ConfineCheck::kPeekNs);
        // A hook may have asked back before `seen` was read (during lend()): no wait then.
        bool pending = behind || (s.lent && !host_detail::g_lent.load());
        if (before < until && !pending) s.table->wait_for_change(slot, seen, until - before);
        g.lock();
        if (stopping_.load()) break;
        std::uint64_t now = now_ns();
        if (now < next) {
            // Retried until the lock is free (each try waits for it up to kFollowLockNs).
            if (s.lent && !host_detail::g_lent.load()) {
                behind = !reclaim();
                // The next estimate sees a whole cycle of the job at work again.
                if (!behind) next = now_ns() + s.cycle_ns;
            } else if (behind || s.table->changes(slot) != seen) {
                behind = !follow_table();
            }
            if (!behind && polling && lending_worthwhile()) poll_quiet(now);
            if (!peeking) continue;
            std::uint64_t cpu_now = s.process_cpu.read_ns();
            std::uint64_t cycle_cpu = cpu_now - std::min(cpu_now, s.last_cpu_ns);
            if (s.check.starting()) s.check.peek_construct(now, cycle_cpu, !quiet_now());
            if (!s.check.window_spent(now, cycle_cpu)) continue;
            ++early_cycles;  // an early cycle, at the `now` the window was found spent at
            next = now + s.cycle_ns;
        } else {
            early_cycles = 0;
            if (next < now) next = now + s.cycle_ns;  // we fell behind (stopped, descheduled): do not burst
        }
        behind = false;  // the cycle reads the table anyway
        cycle(now);
    }
}

namespace {
// The table's name for an adapter's runtime (gat/layout.hpp kRuntime*), for `apshim status`.
std::uint32_t runtime_bit(const char* adapter_name) noexcept {
    std::string_view n(adapter_name);
    return n == "oneTBB" ? gat::kRuntimeTbb : n == "libomp" ? gat::kRuntimeLibomp : n == "libgomp" ? gat::kRuntimeLibgomp : 0;
}
}  // namespace

// Once a second: when the job's CPU quota changed and the table's P is the old quota (the table
// was sized by the same container), the table's P becomes the new quota for every job in it.
void Controller::follow_quota(std::uint64_t now) noexcept {
    Impl& s = *impl_;
    if (s.quota_P == 0 || now < s.next_quota_check) return;
    s.next_quota_check = now + kQuotaCheckNs;
    int q = default_processors();
    int was = s.quota_P;
    s.quota_P = quota_to_follow(was, q, s.table->processors(), [&](int P) {
        if (!s.table->set_processors(P, s.cycle_ns)) return false;
        log(LogLevel::info, "the CPU quota changed: the table's P goes from %d to %d", was, P);
        return true;
    });
    if (s.quota_P == was && q != was) s.next_quota_check = now;  // the table was busy: again next cycle
}

// Mutex held. Measure, estimate, publish, adjust usage, confine, trace.
void Controller::cycle(std::uint64_t now) noexcept {
    Impl& s = *impl_;
    // 1. Measure.
    std::uint64_t busy = 0, marks = 0, region_ends = 0;
    int usage = 0, spinning_team = 0;
    bool timed = false, clocks = false, markable = false;
    bool marks_counted = true;  // every adapter that counts marks counted them the whole cycle
    Adapter* list[kMaxAdapters];
    int n = 0;
    for (auto& slot : adapters_) {
        Adapter* a = slot.load();
        if (!a) continue;
        Sample smp = a->sample();
        std::uint64_t& avg = s.split_busy[&slot - adapters_];
        avg = avg == 0 ? smp.busy_ns : avg - avg / kSplitCycles + smp.busy_ns / kSplitCycles;
        list[n++] = a;
        busy += smp.busy_ns;
        marks += smp.marks;
        region_ends += smp.region_ends;
        spinning_team = std::max(spinning_team, smp.spinning_team);
        if (a->marks_progress()) {
            markable = true;
            marks_counted = marks_counted && smp.measure == Sample::Measure::timed;
        }
        usage += smp.usage;
        timed = timed || smp.measure == Sample::Measure::timed;
        clocks = clocks || smp.measure == Sample::Measure::clocks;
    }
    if (spinning_team > 0) {
        s.spinning_team = std::max(s.spinning_team, spinning_team);
        s.spinning_quiet = 0;
    } else if (s.spinning_team > 0 && ++s.spinning_quiet >= kSpinQuietCycles) {
        s.spinning_team = s.spinning_quiet = 0;
    }
    double dt = static_cast<double>(now - s.last);
    s.last = now;
    int p = std::max(1, usage);
    double r = 1.0 - static_cast<double>(busy) / (p * dt);
    r = std::clamp(r, 0.0, 1.0);

    // 2. Estimate the desire.
    EstimatorInput in;
    in.inefficiency = r;
    in.busy_procs = static_cast<double>(busy) / dt;
    in.usage = p;
    in.allotment = s.allotment;
    in.P = s.P;
    in.eta = opts_.eta;
    int desire = s.estimator->next_desire(in);
    // Lent while quiet: still quiet since it lent, it stays lent (desire 1); work began without a
    // hook asking the processors back (a TBB task enqueued from outside any wait): ask back at
    // least the desire it lent.
    int publish = desire, publish_usage = p;
    if (s.lent) {
        std::uint64_t entries;
        if (host_detail::g_lent.load() && quiet_now(&entries) && entries == s.quiet_entries) {
            publish = publish_usage = 1;
        } else {
            host_detail::g_lent.store(false);
            s.lent = false;
            publish = std::max(desire, s.desire);
        }
    }
    // A job the width check found faster on fewer processors asks for no more for now.
    if (int cap = s.width_check.cap()) publish = std::min(publish, cap);
    if (!s.lent) {
        s.desire = publish;
        s.usage = publish_usage;
    }

    // 3. Publish it; DP answers with the allotment, placement with the processors.
    follow_quota(now);
    s.runtimes = 0;
    for (int i = 0; i < n; ++i) s.runtimes |= runtime_bit(list[i]->name());
    int a = read_table(*s.table, s.slot, &s.seen, [&] {
        return s.table->update(s.slot, publish, publish_usage, s.cycle_ns, &s.procs, s.runtimes, &s.idle);
    });
    read_others();
    if (s.table->processors() != s.P) {  // a job of this table followed a quota change
        s.P = s.table->processors();
        table_P_.store(s.P, std::memory_order_release);
    }
    if (a > 0) {
        s.allotment = a;
        s.failed_updates = 0;
        s.last_holder = {};
    } else if (++s.failed_updates % kHolderLookCycles == 0) {
        // Twice a second while no update gets through: a holder stuck with the lock (stopped or
        // frozen mid-update: SIGSTOP, Ctrl-Z, a debugger, a cgroup freezer) or a lost row. Keep the
        // last allotment, which DP gave us, and say so once, naming the holder. A stuck holder's
        // processors sit idle meanwhile: they are used as the ones no job holds are
        // (APSHIM_USE_IDLE; every running job may), and the first update that gets through says
        // again which are idle.
        s.last_holder = s.table->lock_holder(s.last_holder);
        const gat::LockHolder& holder = s.last_holder;
        bool using_theirs = false;  // runs on some of the holder's processors that are not its own
        if (holder.stuck && holder.pid > 0 && holder.pid != getpid() && opts_.use_idle) {
            gat::ProcSet theirs = holder.procs & ~s.procs;
            if ((s.idle | theirs) != s.idle) a = s.allotment;  // confined below as after a table answer, on the wider set
            s.idle |= theirs;
            using_theirs = theirs.any() && s.idle_check.with_idle();
        }
        if (s.failed_updates == kUpdateFailuresToReport) {
            std::string who = gat::describe_holder(holder);
            log(LogLevel::warn, "table %s: no update for %d cycles: %s; keeping allotment %d meanwhile%s",
                s.table->path().c_str(), kUpdateFailuresToReport,
                who.empty() ? "its lock is busy, or our row was lost" : ("its lock is held by " + who).c_str(), s.allotment,
                using_theirs ? ", and running on the stuck holder's processors too" : "");
        }
    }

    // 4-5. Adjust usage and confine (unless that costs the job more than the CPUs it takes).
    // The process's CPU time is read for the check and the trace, each cycle, so that a cycle
    // without an answer from the table adds nothing to the next one's.
    bool check_runs = checking();
    const bool cpu_read = check_runs || s.trace.is_open();  // s.last_cpu_ns is this cycle's
    std::uint64_t cpu = 0;
    if (cpu_read) {
        std::uint64_t cpu_now = s.process_cpu.read_ns();
        cpu = cpu_now - std::min(cpu_now, s.last_cpu_ns);
        s.last_cpu_ns = cpu_now;
    }
    // The check steps every cycle, whether the table answered or not: its windows are timed in wall
    // and CPU time, and one that waited for an answer ran on unconfined. On 16 CPUs, with the
    // bound, a start that ends after 2 cycles when replayed ran 5 (27 ms, 400 ms of CPU against
    // about 220): updates that waited out their cycle while the job's 16 unconfined threads kept
    // the lock's holders off the CPUs (sixty-fifth session, bench/results/2026-12-04c-device16core).
    // A holder stopped in the lock would have left a probe running until it was resumed
    // (test_check_without_answers.py). Its CPUs meanwhile are the last answer's, as the allotment.
    bool was_suspending = s.check.suspends();
    if (check_runs) {
        bool was_start = s.check.starting();
        // The lending poll's reading of the adapters. Not quiet: a thread is inside a construct,
        // or no adapter can tell (which makes no marks either).
        bool in_construct = !quiet_now();
        s.check.step(now, marks, cpu, confine::confined_cpus(), allotment_confines(), markable, in_construct);
        if ((!was_start || s.spread_due) && s.check.starting()) spread_for_start();
        s.spread_due = false;
        if (was_start && !s.check.starting())
            log(LogLevel::debug, "confine check: the start: %llu marks in %.1f ms CPU unconfined",
                static_cast<unsigned long long>(s.check.probe_window().marks), s.check.probe_window().cpu_ns / 1e6);
        if (s.check.probe_ended())
            log(LogLevel::debug, "confine check: %.2fx the progress per CPU-second unconfined (%llu marks in %.1f ms CPU "
                "unconfined, %llu in %.1f ms confined)", s.check.last_ratio(),
                static_cast<unsigned long long>(s.check.probe_window().marks), s.check.probe_window().cpu_ns / 1e6,
                static_cast<unsigned long long>(s.check.confined_window().marks), s.check.confined_window().cpu_ns / 1e6);
        if (s.check.first_hold_started())
            log(LogLevel::warn, "the job's threads hand work to each other %.0fx faster per CPU-second on all its CPUs "
                "than confined to its allotment's: running them unconfined (as without the shim) for %.0f s at a time, "
                "then measuring again", s.check.last_ratio(), static_cast<double>(s.check.hold_ns()) / 1e9);
    }
    // The width: only while the job holds processors that are CPUs of its own (not APSHIM_P above
    // the cores) and nothing else decides its CPUs. Its width is the processors it runs on, the
    // idle ones it uses too (running_procs): a job whose desire flips between 1 and 2 alone runs on
    // both CPUs either way, as its own or as its own and an idle one (docs/enforcement.md,
    // thirty-fifth session).
    bool width_checking = a > 0 && opts_.width_check && opts_.confine && !confine::why_off() && markable &&
                          !s.check.overrides() && s.P <= CPU_COUNT(&confine::allowed());
    int width = running_procs().count();
    // Parallel work in the cycle (a runtime thread busy, a mark, a region end): where there was
    // none for a while, both checks' windows start after that serial stretch (probe_window.hpp).
    const bool parallel_work = busy > 0 || marks > 0 || region_ends > 0;
    // Half a processor of work at least: a probe without marks read the job's width only where its
    // threads never worked (width_check.hpp, kMaxVoidProbes).
    const bool working = 2.0 * static_cast<double>(busy) >= dt;
    s.width_check.step(now, region_ends, width, width_checking, marks, marks_counted, parallel_work, working);
    if (s.width_check.compared_now())
        log(LogLevel::debug, "width check: %.2fx the progress per second on the half that gained first, %.2fx on the "
            "other: held on the %s half", s.width_check.first_ratio(), s.width_check.other_ratio(),
            s.width_check.on_last_half() ? "last" : "first");
    else if (s.width_check.voided())
        log(LogLevel::debug, "width check: no mark in the probe on %d of %d processors (or a burst's only) while its "
            "threads worked: no reading, wide again",
            s.width_check.probe_width(), width);
    else if (s.width_check.decided())
        log(LogLevel::debug, "width check: %.2fx the progress per second on %d of %d processors (%.0f%% of it in one cycle)",
            s.width_check.last_ratio(), s.width_check.probe_width(), width, 100 * s.width_check.last_peak_share());
    if (s.width_check.first_narrowing_now())
        log(LogLevel::info, "the job gets %.1fx as far per second on %d processors as on the %d it ran on: asking for no more "
            "than %d (measured again now and then)", s.width_check.last_ratio(), s.width_check.probe_width(), width,
            s.width_check.probe_width());
    // The idle processors: only while they are there to use and nothing else decides the job's CPUs,
    // and not where the width check asks the same question: where the job's own processors are
    // half of those it runs on, its probe's first half is exactly its own, and the width check
    // also tries the other half, the idle ones. Held on its own, a job whose own CPU a hog outside
    // the table shares at a higher priority got more there than in its convoy on both, and the
    // idle check kept it there, leaving the idle CPU idle (libgomp's omp_phases at nice 5 beside
    // a nice-0 hog kept to CPU 0, 6 s of tiny regions: 95 000 held on CPU 0 in 2 runs of 3, now
    // 292 000-324 000 on CPU 1; docs/enforcement.md, forty-fifth session).
    bool same_question = width_checking && 2 * s.procs.count() == width;
    bool idle_checking = a > 0 && opts_.use_idle && opts_.idle_check && opts_.confine && !confine::why_off() &&
                         !s.width_check.narrows() && !same_question;
    s.idle_check.step(now, region_ends, idle_checking && s.idle.count() > 0 && markable && !s.check.overrides(), marks,
                      marks_counted, parallel_work);
    if (s.idle_check.probe_ended())
        log(LogLevel::debug, "idle check: %.2fx the progress per second without the idle processors", s.idle_check.last_ratio());
    if (s.idle_check.first_decline_now())
        log(LogLevel::info, "the job gets %.1fx as far per second on its own processors as with the idle ones too: "
            "leaving those idle (measured again now and then)", s.idle_check.last_ratio());
    apply_allotment(a > 0 || s.check.suspends() != was_suspending);
    // Where confinement is off, parking is the only hold: say once when the job's threads keep
    // running beyond it (hold_check.hpp). Held to: the threads apply_allotment lets run (its
    // allotment, or the idle processors it runs on too: APSHIM_USE_IDLE), while below the table's.
    const char* why_unconfined = confine::why_off();
    const bool parking_only = why_unconfined && n > 0 && s.split_total > 0 && s.split_total < s.P &&
                              !std::all_of(list, list + n, [](const Adapter* a) { return a->said_unheld(); });
    const auto process_cpu_now = [&] { return cpu_read ? s.last_cpu_ns : s.process_cpu.read_ns(); };
    if (s.hold_check.step(now, s.split_total, parking_only, process_cpu_now) && !s.told_unheld) {
        s.told_unheld = true;
        log(LogLevel::warn, "the job used %.1f CPUs over the last second where it may use %d, not held to them: "
            "confinement is off, as %s, and parking, the only hold then, stops threads only where their runtime lets "
            "them (before chunks, at barriers, at oneTBB's tasks and waits), which this job's threads do not reach (a "
            "long region of static loops, long tasks, threads spinning on each other)",
            s.hold_check.last_cpus(), s.hold_check.last_allotment(), why_unconfined);
    }
    if (s.trace.is_open())
        s.trace.write(TraceRow{(now - s.t0) / 1e6, publish, s.allotment, p, r, in.busy_procs, confine::confined_cpus(),
                               threads_running(), timed ? "timed" : clocks ? "clocks" : "none",
                               !check_runs || confine::why_off() ? "-"
                               : s.spinning_unconfined         ? "spinning"
                                                               : ConfineCheck::name(s.check.phase()),
                               marks,
                               IdleCheck::name(s.idle_check.phase()),
                               region_ends, WidthCheck::name(s.width_check.phase()), cpu / 1e6});
}

bool Controller::checking() const noexcept { return opts_.confine_check && !confine::why_off(); }

bool Controller::allotment_confines() const noexcept {
    const Impl& s = *impl_;
    int confined_to = confine::cpus_for(usable_procs(s.procs, s.idle, opts_.use_idle), s.P);
    return confined_to > 0 && !spins_beyond(s.spinning_team, confined_to, opts_.confine_check);
}

void Controller::spread_for_start() noexcept {
    int moved = confine::spread(impl_->tid);
    log(LogLevel::debug, "confine check: the start spreads %d threads over the job's CPUs", moved);
}

gat::ProcSet Controller::running_procs() const noexcept {
    const Impl& s = *impl_;
    return usable_procs(s.procs, s.idle, opts_.use_idle && s.idle_check.with_idle());
}

// Mutex held. 4. Adjust usage: split the allotment among the runtimes by their measured demand
// (the last cycle's). Runtimes may create worker threads inside these calls; those inherit the
// creating thread's name (HostIdentity) and its full signal mask. 5. Confine (when the table
// answered): the job's threads run on its processors' CPUs only.
void Controller::apply_allotment(bool confine_now) noexcept {
    Impl& s = *impl_;
    Adapter* list[kMaxAdapters];
    std::uint64_t busy[kMaxAdapters];
    int n = 0;
    for (int i = 0; i < kMaxAdapters; ++i)
        if (Adapter* a = adapters_[i].load()) {
            list[n] = a;
            busy[n++] = s.split_busy[i];
        }
    int share[kMaxAdapters];
    gat::ProcSet cpus = running_procs();
    // A width probe runs the job on half the processors it runs on; narrowed, it keeps to as many
    // as it asks for: its own first, or the other half (width_half).
    if (s.width_check.narrows())
        cpus = width_half(s.procs, cpus, s.width_check.probe_width(), s.width_check.on_last_half());
    confine::publish_placement(cpus, s.P);  // before the limits below (parking.hpp reads both)
    int total = std::max(s.allotment, cpus.count());
    split_allotment(total, busy, n, share, n == s.split_n && total == s.split_total ? s.split : nullptr);
    std::copy(share, share + n, s.split);
    s.split_n = n;
    s.split_total = total;
    // Where a check runs the job on fewer CPUs than it could run on (a width probe or hold, the idle
    // check's probe or its keeping the job off the idle processors), teams the program lets the
    // runtime size (OMP_DYNAMIC=true) form no wider than those CPUs at once, so that a probe
    // measures what that width would give: with teams at the allotment's width (RecentMax), a width
    // probe ran teams of two on one CPU beside a CPU hog and kept wide a job that went 1.3x as fast
    // with teams of one there. Only the teams: with fewer threads active than a team, the hooks
    // would time and count marks in the probe that the untimed window before it does not
    // (omp.*.width narrowed a computing job so). A dip of the allotment itself is no check's:
    // RecentMax rides it out.
    int could = usable_procs(s.procs, s.idle, opts_.use_idle).count();
    int team_cap = cpus.count() < could ? cpus.count() : 0;
    // Named as the host only here, where a runtime may create threads: the rest of the cycle it
    // is apshim-ctl, which tools and tests use to tell it from the program's threads (it is never
    // confined; named as the host through a whole cycle, the confinement's /proc walk included, a
    // test's look at the threads' masks once took it for a program thread left on every CPU).
    {
        HostIdentity host(host_name_);
        for (int i = 0; i < n; ++i) {
            list[i]->set_active(share[i]);
            list[i]->set_team_cap(team_cap);
        }
    }
    bool spinning = confine_now && spins_beyond(s.spinning_team, confine::cpus_for(cpus, s.P), opts_.confine_check);
    s.spinning_unconfined = spinning;
    if (spinning)
        APSHIM_LOG_ONCE(LogLevel::info, "a team of %d threads that may wait for each other in spin-waits (a library's "
                        "such as BLIS, an Eigen product's, or a parallel sections region's) runs: the job is not confined below its team "
                        "while such teams run, as without apshim", s.spinning_team);
    // Its start, a probe, hand-over bound (confine_check.hpp), or a team that spins (spins_beyond).
    bool suspended = confine_now && (s.check.suspends() || spinning);
    if (confine_now) confine::suspend(suspended);
    // Back from a width probe onto every CPU: spread the threads at once, as the confinement
    // check's probes do, or the kernel leaves them on the probe's CPUs for tens of milliseconds.
    bool spread = s.width_check.decided() && !confine::restricts(cpus, s.P);
    if (suspended || (confine_now && spread)) {
        confine::release(/*spread=*/true);
    } else if (const bool was_on = !confine::why_off(); confine_now && !confine::apply(cpus, s.P, s.tid) && was_on) {
        if (const char* why = confine::why_off()) {  // turned off just now (before, first_allotment said why)
            const bool by_program = confine::off_by_program();
            APSHIM_LOG_ONCE(confine::off_by_fault() || by_program ? LogLevel::warn : LogLevel::info,
                            "stopped confining threads: %s; throttling by parking only%s", why,
                            by_program ? " (turn the program's own thread pinning off, e.g. GROMACS's `mdrun -pin off`, "
                                         "to let apshim hold it to its allotment)"
                                       : "");
        }
    }
}

// Mutex held. Another job's DP run changed the table between our cycles: take our allotment and
// processors as DP left them now. Nothing is measured or published here (the next cycle does).
// False when the table's lock was busy (try again); a row no longer ours is left to the next cycle.
bool Controller::follow_table() noexcept {
    Impl& s = *impl_;
    gat::ProcSet procs, idle;
    int a = read_table(*s.table, s.slot, &s.seen, [&] { return s.table->current(s.slot, &procs, kFollowLockNs, &idle); });
    if (a < 0) return false;
    if (a == 0 || (a == s.allotment && procs == s.procs && idle == s.idle)) return true;
    s.allotment = a;
    s.procs = procs;
    s.idle = idle;
    apply_allotment(true);
    read_others();
    return true;
}

// Mutex held. Whether a co-runner has less than it desires, for lending (below) and for the
// runtimes' idle threads, which give their CPUs back at once only while one does (Host).
void Controller::read_others() noexcept {
    Impl& s = *impl_;
    s.others_want_more = s.table->others_want_more(s.slot);
    others_want_more_.store(s.others_want_more, std::memory_order_relaxed);
}

// Lending (DLB's LeWI, at the granularity of a whole job): a job whose runtimes' threads have all
// been outside any parallel construct for APSHIM_LEND_MS (a serial phase, I/O, a join) publishes
// desire 1 at once, so that DP hands its other processors to co-runners now rather than at its
// next est_cycle; the first thread to enter a construct again asks them back (busy.hpp:
// begin_outer, wake_to_reclaim), and the job gets the desire it had before, not the 1 its quiet
// cycles would estimate (WSAP would then climb back a doubling per cycle). Worth the polls only
// while the job holds more than one processor and a co-runner wants more than it has; a job
// alone never polls.
bool Controller::lending_worthwhile() const noexcept {
    const Impl& s = *impl_;
    return s.lend_ns > 0 && !s.lent && s.allotment > 1 && s.others_want_more;
}

// Mutex held. Every adapter outside its runtime's constructs now (adapter.hpp: Activity); the
// adapters' entries total in *entries, where asked for (the lending poll's; the confinement
// check asks only whether a construct runs).
bool Controller::quiet_now(std::uint64_t* entries) noexcept {
    if (entries) *entries = 0;
    bool any = false;
    for (auto& slot : adapters_) {
        Adapter* a = slot.load();
        if (!a) continue;
        Activity act = a->activity();
        if (act.active) return false;
        if (entries) *entries += act.entries;
        any = true;
    }
    return any;
}

// Mutex held. Quiet at two polls in a row with no construct in between: lend.
void Controller::poll_quiet(std::uint64_t) noexcept {
    Impl& s = *impl_;
    std::uint64_t entries;
    bool quiet = quiet_now(&entries);
    if (quiet && s.quiet_seen && entries == s.quiet_entries && lend()) {
        s.quiet_seen = false;
        return;
    }
    s.quiet_seen = quiet;
    s.quiet_entries = entries;
}

// Mutex held. Publishes desire 1. The flag goes up first: a construct that starts during the
// update asks back at once. False when the table's lock was busy (the next poll tries again).
bool Controller::lend() noexcept {
    Impl& s = *impl_;
    host_detail::g_lent.store(true);
    s.lent = true;
    gat::ProcSet procs = s.procs, idle = s.idle;
    int a = read_table(*s.table, s.slot, &s.seen,
                       [&] { return s.table->update(s.slot, 1, 1, kFollowLockNs, &procs, s.runtimes, &idle); });
    if (a <= 0) {
        host_detail::g_lent.store(false);
        s.lent = false;
        return false;
    }
    s.allotment = a;
    s.procs = procs;
    s.idle = idle;
    apply_allotment(true);
    return true;
}

// Mutex held. A hook asked back (g_lent is down): publish the desire and usage lent. False when
// the lock was busy (cycle_loop tries again at once).
bool Controller::reclaim() noexcept {
    Impl& s = *impl_;
    gat::ProcSet procs = s.procs, idle = s.idle;
    int a = read_table(*s.table, s.slot, &s.seen,
                       [&] { return s.table->update(s.slot, s.desire, s.usage, kFollowLockNs, &procs, s.runtimes, &idle); });
    if (a < 0) return false;
    s.lent = false;
    if (a > 0) {
        s.allotment = a;
        s.procs = procs;
        s.idle = idle;
        apply_allotment(true);
    }
    read_others();
    restart_window();
    return true;
}

// Mutex held. The next cycle measures from now: a window mostly spent quiet would read as a job
// that needs one processor.
void Controller::restart_window() noexcept {
    Impl& s = *impl_;
    for (auto& slot : adapters_)
        if (Adapter* a = slot.load()) a->sample();
    s.last = now_ns();
}

void Controller::wake_to_reclaim() noexcept {
    if (gat::Table* t = cycling_table_.load(std::memory_order_acquire)) t->notify_change(cycling_slot_.load());
}

void split_allotment(int allotment, const std::uint64_t* busy, int n, int* share, const int* previous) noexcept {
    if (n <= 0) return;
    std::uint64_t total = 0;
    for (int i = 0; i < n; ++i) total += busy[i];
    int spare = std::max(0, allotment - 1), left = spare;
    for (int i = 0; i < n; ++i) {
        int part = total > 0 ? static_cast<int>(std::lround(spare * (static_cast<double>(busy[i]) / static_cast<double>(total))))
                             : spare / n;
        part = std::clamp(part, 0, left);
        if (i == n - 1) part = left;
        share[i] = 1 + part;
        left -= part;
    }
    if (previous && std::equal(share, share + n, previous, [](int a, int b) { return std::abs(a - b) <= 1; }))
        std::copy(previous, previous + n, share);
}

void Controller::shutdown() noexcept {
    if (stopping_.exchange(true)) return;
    host_detail::g_lent.store(false);
    wake(wake_);
    if (gat::Table* t = cycling_table_.load(std::memory_order_acquire)) t->notify_change(cycling_slot_.load());
    // start_thread() writes these under the mutex and checks stopping_ there first, so once we
    // hold it no thread can start any more; join without it (the thread takes it every cycle).
    bool joinable;
    unsigned long thread;
    {
        std::lock_guard<std::mutex> g(mutex_);
        joinable = thread_joinable_;
        thread = thread_;
        thread_joinable_ = false;
    }
    if (joinable) pthread_join(static_cast<pthread_t>(thread), nullptr);
    std::lock_guard<std::mutex> g(mutex_);
    confine::release();
    let_adapters_go();
    if (impl_) {
        if (impl_->table && impl_->slot >= 0) impl_->table->leave(impl_->slot);
        impl_->slot = -1;
        impl_->trace.close();
    }
}

void Controller::before_fork() noexcept { mutex_.lock(); }
void Controller::after_fork_parent() noexcept { mutex_.unlock(); }

void Controller::after_fork_child() noexcept {
    // Only the forking thread exists now: no controller thread, and the parent's row is not
    // ours. The child becomes a job of its own when one of its runtimes is used again.
    // before_fork() locked mutex_ on this very thread (the one fork() returns in): unlock it,
    // as the parent does, rather than constructing a new mutex over a locked one.
    mutex_.unlock();
    host_detail::g_lent.store(false);
    others_want_more_.store(true);  // the child has read no table yet
    thread_joinable_ = false;
    cycling_table_.store(nullptr);
    cycling_slot_.store(-1);
    started_.store(false);
    stopping_.store(false);
    adapters_let_go_.store(false);  // the child tries the table again
    if (impl_) {
        impl_->slot = -1;
        impl_->lent = false;
        impl_->trace.abandon();
        // A job of its own: its own measurements of what confinement and idle processors do to
        // it (the parent's windows and holds ran on the parent's threads).
        impl_->check = ConfineCheck{};
        impl_->idle_check = IdleCheck{};
        impl_->width_check = WidthCheck{};
        impl_->hold_check = HoldCheck{};
        impl_->told_unheld = false;
    }
}

}  // namespace apshim
