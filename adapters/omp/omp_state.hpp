// What the OpenMP adapters share between the runtime's threads (hooks) and the controller:
// one State per runtime (libomp, libgomp). Plain atomics; hooks only load them or touch their
// own thread's slot, except the few counters noted.
#pragma once

#include <atomic>
#include <cstdint>

#include "adapters/adapter.hpp"
#include "adapters/common/next_fn.hpp"
#include "adapters/common/park.hpp"
#include "adapters/common/thread_slots.hpp"

namespace apshim::omp_adapter {

// State::limit values besides an allotment (> 0).
constexpr int kNotStarted = 0;  // no allotment yet: default teams get APSHIM_P threads
constexpr int kReleased = -1;   // release(): the program's own requests, untouched

// The highest of the last kCycles allotments. A team cannot grow once formed, so a region
// forked during a one-cycle dip (a cycle that read idle across region boundaries, or on a loaded
// machine) would keep the dip's width for its whole life: LLVM's omp_task ran 3 of its 10
// 2.5 s regions on one thread under load. Teams form at this width instead, and threads beyond
// the current allotment park inside the region (parking.hpp); a drop that lasts kCycles cycles
// narrows the next teams. Controller thread only.
class RecentMax {
public:
    static constexpr int kCycles = 4;
    int push(int n) noexcept {
        last_[next_++ % kCycles] = n;
        int m = n;
        for (int v : last_) m = v > m ? v : m;
        return m;
    }
    void reset() noexcept { *this = RecentMax(); }

private:
    int last_[kCycles] = {};
    unsigned next_ = 0;
};

struct State {
    ThreadSlots<1024> slots;                        // per-thread busy time (TSC ticks)
    std::atomic<int> limit{kNotStarted};            // threads allowed to execute work
    std::atomic<int> team_limit{kNotStarted};       // width new default teams form at (RecentMax)
    std::atomic<int> team_cap{0};                   // ... and no wider while > 0 (set_team_cap)
    // Allotment 1 and APSHIM_INLINE_TASKS on: a task made inside a task runs at once (one CPU
    // has no use for a queue; adapter.hpp: inline_tasks). One relaxed load per task.
    std::atomic<bool> tasks_at_once{false};
    // The hooks time every task, chunk and wait (adapters/common/busy.hpp): on while the
    // allotment is below the job's team (parking needs the intervals, the measure must be
    // exact), or for good when the user chose how long idle threads spin (their spinning would
    // read as work on the CPU clocks). Off, a task costs the hooks only their frame bookkeeping.
    std::atomic<bool> timing{false};
    std::atomic<bool> always_timed{false};
    ParkingLot lot;                                 // threads beyond the limit wait here
    std::atomic<int> parked{0};                     // how many wait there now
    std::atomic<int> parked_before_chunks{0};       // how many of them park() holds (marked parked_at_loop)
    std::atomic<int> parked_in_barrier{0};          // how many of them wait_in_barrier() holds (libomp)
    std::atomic<std::uint32_t> barrier_news{0};     // bumped for those: a teammate found no task, or left
    // libgomp: threads are held at a barrier that all their teammates reached, while the queue
    // has tasks; the task that empties it wakes them (parking.hpp: at_barrier, tell_held_if_drained).
    std::atomic<bool> held_for_queue{false};
    SharedCpuTotal cpu_total;                       // the threads' CPU time, for the parked (parking.hpp)
    SharedCpuTotal barrier_cpu;                     // the same, read once a second: at_barrier's CPU rule
    std::atomic<std::uint32_t> loops_exhausted{0};  // bumped when a chunk fetch finds a loop done
    std::atomic<bool> seen{false};                  // runtime_started() called (again after fork)
    std::atomic<std::uint64_t> first_wait_until{0}; // barriers wait for the first allotment until then (parking.hpp)
    std::atomic<std::uint32_t> fork_generation{0};  // bumped in a fork child: threads re-claim slots
    std::atomic<std::uint64_t> forks{0};            // outermost regions started (master only)
    std::atomic<int> last_team{0};                  // team size given to the last outermost region
    // Threads beyond the masters in outermost teams alive now, over all the program's threads
    // that fork (a TBB worker running an OpenMP loop is one such master): reserve_team() keeps
    // them within limit - 1, so concurrent roots share the allotment instead of each taking it.
    std::atomic<int> team_extras{0};
    // libomp only: 1 once libomp initialised apshim as its OMPT tool; other_tool when the user
    // named a tool of their own in OMP_TOOL_LIBRARIES (then libomp is not measured).
    std::atomic<int> measuring{0};
    std::atomic<bool> other_tool{false};
    // libomp only: 1 once its OMPT parallel_begin/end callbacks report region ends, which
    // reserve_team() needs to give threads back (gomp hooks see region ends themselves).
    std::atomic<int> sees_region_ends{0};
    // Outermost regions open now, and the widest team begun since the controller last looked
    // (OmpAdapter::sample exchanges it), of a library that meets in spin-waits without a yield
    // (whole_team.hpp: begin_spinning_team). Touched at such forks and ends only.
    std::atomic<int> spinning_open{0};
    std::atomic<int> spinning_team{0};
    // `parallel sections` regions whose sections may meet (whole_team.hpp: begin_sections_team)
    // open now, how many ever began, and the team of the last to begin: OmpAdapter::sample counts
    // one as spinning once it stays open without another beginning. Touched at such regions only.
    std::atomic<int> sections_open{0};
    std::atomic<unsigned> sections_begun{0};
    std::atomic<int> sections_team{0};
    // The objects the hooks' entry points were found in for their callers (next_fn.hpp): two of
    // them, two copies of the runtime in the process, and then the hooks stop adapting it.
    RuntimeCopies copies;
};

extern State g_kmp_state;   // libomp (clang -fopenmp programs)
extern State g_gomp_state;  // libgomp (gcc -fopenmp programs)

// What the forking thread's data environment says at an outermost fork (OpenMP's ICVs are per
// thread: one pthread's omp_set_num_threads or omp_set_dynamic is not another's), read from the
// runtime itself by the hooks.
struct ForkIcvs {
    bool dynamic = false;  // dyn-var: omp_get_dynamic()
    int max_threads = 0;   // nthreads-var: omp_get_max_threads(), what the program was told
};

// Team size for an outermost region that asked for `requested` threads (0 = the default).
// OpenMP promises exactly the requested team (or omp_get_max_threads() threads for a default one)
// while dynamic adjustment is off, and programs rely on it: OpenBLAS splits its work into
// omp_get_max_threads() pieces that wait for each other (a smaller team hung NumPy), NPB IS
// indexes per-thread buckets sized by omp_get_max_threads() (a larger team crashed it). So the
// shim leaves every request alone (returns `requested`) unless the program allowed dynamic
// adjustment (OMP_DYNAMIC=true, omp_set_dynamic(1)) or the user opted in (APSHIM_SHRINK_TEAMS=1).
// Then the team is min(the request or max_threads, the highest allotment of the last
// RecentMax::kCycles cycles), never more than the program was told; before the first allotment
// the full request. Either way the allotment is enforced by confinement (shim/confine.hpp) and,
// inside regions, by parking at chunk fetches (parking.hpp). A region forked from a library that
// needs whole teams (whole_team.hpp: OpenBLAS) is asked for with neither permission by the hooks.
int team_size(const State& s, int requested, const ForkIcvs& icvs, bool opted_in) noexcept;

// The team an outermost region asked for where it may get fewer threads (the request, or
// omp_get_max_threads() for a default one), for note_missing_arrivals (thread_state.hpp); 0
// where its team is whole by OpenMP's promise.
int whole_team_asked(int requested, const ForkIcvs& icvs, bool opted_in) noexcept;

// team_size(), further capped so that the extra threads of all concurrent outermost teams stay
// within the limit (the root itself is always allowed: it is a master, already running), and
// reserved: `reserved` receives the extras taken, which the caller gives back with
// release_team() when the region ends. Returns `requested` when the shim leaves it alone.
int reserve_team(State& s, int requested, const ForkIcvs& icvs, bool opted_in, int& reserved) noexcept;
void release_team(State& s, int reserved) noexcept;

// The omp_* queries of one runtime, found in the library that defines its fork entry point
// `Anchor` (with libomp and libgomp both loaded, RTLD_NEXT alone could answer from the wrong one).
template <typename Anchor>
struct OmpQueries {
    using IntFn = int (*)();
    BesideFn<IntFn, Anchor> level, thread_num, num_threads, dynamic, max_threads;
    // The runtime's own omp_set_dynamic, not the shim's (omp_env.cpp), which would take the
    // shim's call for the program's: for whole teams (whole_team.hpp).
    BesideFn<void (*)(int), Anchor> set_dynamic;
    constexpr explicit OmpQueries(NextFn<Anchor>& anchor) noexcept
        : level(anchor, "omp_get_level"), thread_num(anchor, "omp_get_thread_num"),
          num_threads(anchor, "omp_get_num_threads"), dynamic(anchor, "omp_get_dynamic"),
          max_threads(anchor, "omp_get_max_threads"), set_dynamic(anchor, "omp_set_dynamic") {}
    void resolve_at_load() noexcept {
        level.resolve_at_load();
        thread_num.resolve_at_load();
        num_threads.resolve_at_load();
        dynamic.resolve_at_load();
        max_threads.resolve_at_load();
        set_dynamic.resolve_at_load();
    }
    // True on the thread of an outermost fork (nesting level 0).
    bool outermost() noexcept {
        auto f = level.get();
        return f && f() == 0;
    }
    // The forking thread's ICVs; omp_get_max_threads() only when it may matter (`need_max`).
    ForkIcvs icvs(bool need_max) noexcept {
        ForkIcvs out;
        auto dyn = dynamic.get();
        out.dynamic = dyn && dyn() != 0;
        auto max = max_threads.get();
        if (max && (out.dynamic || need_max)) out.max_threads = max();
        return out;
    }
};

// APSHIM_SHRINK_TEAMS=1, unless the program turned dynamic adjustment off explicitly
// (omp_set_dynamic(0) anywhere, OMP_DYNAMIC=false): then it relies on exact teams (omp_env.cpp).
bool shrink_allowed_by_user() noexcept;

// The shim's KMP_BLOCKTIME in milliseconds as libomp read it (omp_env.cpp), or -1 when the user
// chose libomp's waiting (KMP_BLOCKTIME, OMP_WAIT_POLICY) or the shim is disabled.
int shim_kmp_blocktime() noexcept;

// The user capped libomp's threads in all (KMP_DEVICE_THREAD_LIMIT, KMP_ALL_THREADS), where a root
// of the shim's would count against a team: no roots then (kmp_roots.hpp; omp_env.cpp).
bool kmp_threads_capped_by_user() noexcept;

// libomp's entry points for the shim's roots (kmp_roots.hpp), beside its __kmpc_fork_call; null
// ones before the program's first libomp fork.
struct KmpEntries;
KmpEntries kmp_root_entries() noexcept;

// libomp, on a thread at a barrier of an outermost region (not its end): the blocktime of this
// thread's wait follows confinement, as the forking thread's does at a fork (kmp_hooks.cpp).
void follow_blocktime_at_barrier() noexcept;

// Called by the hooks on every outermost fork: tells the shim the runtime is in use (again
// after fork()) and counts the region.
void note_fork(State& s, int team) noexcept;

}  // namespace apshim::omp_adapter
