// The one interface between the shim's controller and a parallel runtime.
//
// An adapter knows its runtime (how to measure busy vs idle time of its threads, how to keep
// only n of them executing work) and nothing about the GAT or other processes.
//
// Two kinds of code live in an adapter, and file names say which:
//   *_hooks.cpp  runs inside the runtime's own threads (interposed entry points, ITT/OMPT
//                callbacks): tiny, lock-free, allocation-free, never logs, never blocks except
//                in the parking primitive (adapters/common/park.hpp).
//   the rest     runs on the shim's controller thread (sample, set_active, release).
#pragma once

#include <atomic>
#include <cstdarg>
#include <cstdint>

namespace apshim {

// What an adapter measured since its previous sample().
struct Sample {
    // Nanoseconds the runtime's threads spent executing user work (task bodies, loop chunks),
    // summed over threads. Time blocked inside the runtime (stealing, barriers, nested waits,
    // parked) is not busy.
    std::uint64_t busy_ns = 0;
    // Threads that were allowed to execute work during the interval (p_j of Sen §6.1): the
    // limit in force, capped by the threads the runtime actually had; masters included.
    int usage = 0;
    // The runtime was used (any task, region or chunk) since the previous sample.
    bool used = false;
    // Where busy_ns came from: the hooks timing every task (while throttled), the threads' CPU
    // clocks (adapters/common/busy.hpp), or nowhere (a runtime that cannot be measured: busy
    // is then every allowed thread while its regions run).
    enum class Measure { none, clocks, timed };
    Measure measure = Measure::none;
    // Progress marks since the previous sample: runtime calls whose number the program fixes,
    // however its threads are scheduled (OpenMP: tasks made and run, chunks fetched, ordered turns,
    // barriers and taskwaits entered), counted while the hooks are timed; 0 otherwise. How many
    // the job makes per CPU-second tells the controller whether confinement slows its hand-overs
    // (shim/confine_check.hpp).
    std::uint64_t marks = 0;
    // OpenMP region ends (threads' arrivals at a region's end barrier) since the previous sample, timed
    // or not: more progress for the idle and width checks only (adapters/common/busy.hpp, region_ends).
    std::uint64_t region_ends = 0;
    // The widest team, running now or since the previous sample, of a library whose threads meet
    // in spin-waits without a yield (OpenMP: BLIS, adapters/omp/whole_team.hpp); 0: none. On
    // fewer CPUs than it has threads, each of its meetings waits for a kernel time slice, and the
    // controller does not confine the job below it while it runs (shim/controller.cpp).
    int spinning_team = 0;
};

// What an adapter sees its threads doing right now (Adapter::activity): enough for the controller
// to tell that the job has gone quiet (a serial phase, I/O, a join) and lend its processors at
// once instead of at its next est_cycle (shim/controller.cpp, APSHIM_LEND_MS).
struct Activity {
    // A thread is inside a parallel construct (an outermost region, a TBB wait) or a task now.
    // True where the adapter cannot tell: such a job never lends.
    bool active = true;
    // Changes whenever a thread leaves an outermost construct or begins a timed task: two quiet
    // readings with the same value mean no construct (and, while timed, no task) ran in between.
    std::uint64_t entries = 0;
};

class Adapter {
public:
    virtual ~Adapter() = default;
    virtual const char* name() const = 0;
    // Controller thread: counters since the previous call.
    virtual Sample sample() = 0;
    // Controller thread: from now on at most n threads (masters included, n >= 1) execute this
    // runtime's work. Threads above n leave at their next safe point (task or chunk boundary),
    // never in the middle of user code; raising n wakes them.
    virtual void set_active(int n) = 0;
    // Controller thread: teams that the runtime may form smaller than asked (OpenMP where the
    // program allowed dynamic adjustment) form no wider than n, whatever set_active() allows; 0:
    // no cap. The CPUs a check runs the job on while they are fewer than it holds (a width probe
    // or hold, the idle check's probe or decline: shim/controller.cpp).
    virtual void set_team_cap(int) {}
    // Controller thread: is any thread inside the runtime's work now (Activity). Scans the
    // threads' counters; touches nothing the hooks write per task.
    virtual Activity activity() { return {}; }
    // The limit last set (the runtime's own default before any set_active).
    virtual int active() const = 0;
    // Controller thread or exit: wake every parked thread and stop throttling for good.
    virtual void release() = 0;
    // In a fork() child (shim/fork.cpp, whether or not the parent's controller knew this adapter):
    // only the forking thread survives; forget the parent's threads, parked ones, throttles and
    // measurements, so the child starts as a new process would.
    virtual void after_fork_child() {}
    // Counts progress marks (Sample::marks) while throttled: the controller's confinement check
    // can judge its jobs (shim/confine_check.hpp). oneTBB counts none: its tasks are not hooked
    // while confinement throttles.
    virtual bool marks_progress() const { return false; }
    // Controller thread: the adapter has said once that nothing holds its runtime's threads (the
    // program chose their number itself, and confinement cannot be: oneTBB's
    // max_allowed_parallelism). The controller's hold check (shim/hold_check.hpp) then has nothing
    // to add about them: a second line, with another reason, told the user the same thing.
    virtual bool said_unheld() const { return false; }
};

}  // namespace apshim

namespace apshim {

// What an adapter may ask of the shim that hosts it: the one way out of adapters/ (which include
// nothing from shim/). The shim installs its Host in its first constructor (shim/preload.cpp);
// until then, and for good when the shim is disabled (APSHIM_DISABLE=1, or it refused to start),
// host() is this base class, which answers "disabled", 0 and "not chosen" and does nothing.
//
// Hooks call host() inside the runtimes' threads and even before any constructor ran (a
// sanitizer runtime calls sysconf early, shim/cpu_hooks.cpp): every method is lock-free,
// allocation-free and safe there, except where its comment says otherwise.
class Host {
public:
    enum class Severity { error = 1, warn = 2, info = 3, debug = 4 };  // the shim's LogLevel values

    constexpr Host() noexcept = default;
    ~Host() = default;  // static objects only, never deleted through a pointer
    Host(const Host&) = delete;
    Host& operator=(const Host&) = delete;

    // False until the shim is up: an adapter then does nothing at all (its constructors included:
    // they run after the shim's, priority 110+ against 101).
    bool enabled() const noexcept { return enabled_; }

    // The adapter's runtime was used for the first time in this process (or again after fork in
    // the child). Cheap and lock-free after the first call; the first one starts the controller
    // thread (and allocates).
    virtual void runtime_started(Adapter&) const noexcept {}

    // P as the table has it once the controller joined (APSHIM_P, or the machine's, before), so
    // an adapter can size a runtime's default team to it; 0 when disabled.
    virtual int processors() const noexcept { return 0; }
    // CPUs the job may run on at most (its starting mask, capped by its cgroup's quota), or 0 when
    // disabled. processors() exceeds it only where APSHIM_P says so.
    virtual int cpus() const noexcept { return 0; }
    // One est_cycle in nanoseconds, as the table has it once joined (for parking time-outs).
    virtual std::uint64_t est_cycle_ns() const noexcept { return 5000000; }
    // APSHIM_SHRINK_TEAMS=1: the user's promise that this program's default OpenMP teams may be
    // narrower than omp_get_max_threads() even while dynamic adjustment is off.
    virtual bool shrink_teams_opted_in() const noexcept { return false; }
    // False while confinement (shim/confine.hpp) holds the job's threads to its allotment's CPUs.
    // Parking at safe points is then only a cost: a thread parked before its next chunk comes
    // back up to one escape poll (1 ms) late, and with a teammate spinning on a user-level flag
    // (NPB LU's pipeline) up to a second late: LU.S at allotment 1 took 13-17 s against 0.17 s
    // confined without parking. Also false while the confinement check leaves a job unconfined
    // because confinement slows its hand-overs (shim/confine_check.hpp): parking would throttle
    // those very hand-overs. Lock-free (two atomic loads).
    virtual bool parking_wanted() const noexcept { return true; }
    // True while confinement holds some of the job's threads to fewer CPUs than its own (a thread
    // spinning there keeps a teammate from the CPU). One atomic load.
    virtual bool confined() const noexcept { return false; }
    // The CPUs confinement holds the job's threads to now; 0 while it does not. One atomic load.
    virtual int confined_cpus() const noexcept { return 0; }
    // Some other job of the table has fewer processors than it desires (as the controller last
    // read the table; true until it first did): the job's idle threads must give their CPUs back
    // at once. While none does, a job that is not confined waits as the runtime would without
    // the shim. One atomic load.
    virtual bool others_want_more() const noexcept { return false; }
    // False when confinement can never hold this job (the user binds threads, APSHIM_CONFINE=0,
    // no readable CPU mask): then only parking enforces an allotment, and adapters keep the
    // per-task hooks parking needs. It can still turn false later (the program binds itself).
    virtual bool confinement_possible() const noexcept { return false; }
    // The environment asks libomp to bind threads (OMP_PROC_BIND, KMP_AFFINITY...): confinement,
    // which a program that links no runtime keeps until one binds (shim/confine.hpp:
    // libomp_binding_asked), will not hold the threads of a libomp that a plugin loads later. Set
    // before the adapters' constructors.
    virtual bool libomp_binding_asked() const noexcept { return false; }

    // Where the threads are bound (a user's binding, the program's own: confinement off for it),
    // the rank of `cpu` among the CPUs the table placed the job on: 0 for the CPU of its lowest
    // processor (the one it keeps when its allotment shrinks to 1), 1 the next..., kCpuUnplaced
    // for one not among them; -1 where not known (not bound, no allotment yet). The adapters
    // choose which threads work by it (adapters/omp/parking.hpp). Lock-free.
    static constexpr int kCpuUnplaced = 253;
    virtual int cpu_rank(int) const noexcept { return -1; }

    // APSHIM_INLINE_TASKS: at allotment 1 an OpenMP task made inside another task may run at once
    // on the thread that made it. OpenMP lets an implementation run any task at once (both
    // runtimes do when their queues are long); on one CPU a queue buys no parallelism, only its
    // cost: fib tasks at allotment 1 took 2.4-2.7x their one-thread time. Read by set_active(),
    // not per task.
    virtual bool inline_tasks() const noexcept { return false; }

    // The job lent its processors while quiet (shim/controller.cpp) and a thread now enters an
    // outermost construct (busy.hpp: begin_outer): ask them back at once. Called only while
    // host_detail::g_lent is set (reclaim_if_lent), so never on a hot path; one futex wake.
    virtual void reclaim() const noexcept {}

    // Before main (constructors only): set a runtime's environment variable to the shim's
    // default unless the user chose a value (remembered as the shim's, so that programs started
    // without the shim do not inherit it); and whether the user chose one.
    virtual void env_default(const char*, const char*) const noexcept {}
    virtual bool env_chosen_by_user(const char*) const noexcept { return false; }

    // One line on stderr, printf-style, dropped above the configured level. Controller thread,
    // constructors and exit only: never from a hook.
    void log(Severity level, const char* fmt, ...) const noexcept __attribute__((format(printf, 3, 4)));

protected:
    constexpr explicit Host(bool enabled) noexcept : enabled_(enabled) {}
    virtual void vlog(Severity, const char*, va_list) const noexcept {}

private:
    bool enabled_ = false;
};

namespace host_detail {
extern std::atomic<const Host*> g_installed;
extern const Host g_disabled;
// Set by the controller while the job has lent its processors (APSHIM_LEND_MS), cleared by the
// first thread to ask them back.
extern std::atomic<bool> g_lent;
}  // namespace host_detail

// The shim's Host once installed, else the disabled one. One atomic load.
inline const Host& host() noexcept {
    const Host* h = host_detail::g_installed.load(std::memory_order_acquire);
    return h ? *h : host_detail::g_disabled;
}

// Hooks, at an outermost entry: one relaxed load and a branch not taken while nothing is lent.
inline void reclaim_if_lent() noexcept {
    if (host_detail::g_lent.load(std::memory_order_relaxed)) [[unlikely]] {
        if (host_detail::g_lent.exchange(false, std::memory_order_acq_rel)) host().reclaim();
    }
}

// The shim, once its constructor has everything in place (options, controller, fork handlers).
void install_host(const Host& h) noexcept;

}  // namespace apshim

// Says it only the first time this line is reached (controller thread): "says so once on stderr".
#define APSHIM_HOST_LOG_ONCE(level, ...)                                               \
    do {                                                                               \
        static std::atomic<bool> apshim_said_{false};                                  \
        if (!apshim_said_.exchange(true)) ::apshim::host().log(level, __VA_ARGS__);    \
    } while (0)
