// What the OpenMP adapters share between the runtime's threads (hooks) and the controller:
// one State per runtime (libomp, libgomp). Plain atomics; hooks only load them or touch their
// own thread's slot, except the few counters noted.
#pragma once

#include <atomic>
#include <cstdint>

#include "adapters/adapter.hpp"
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
    ParkingLot lot;                                 // threads beyond the limit wait here
    std::atomic<int> parked{0};                     // how many wait there now
    std::atomic<std::uint32_t> loops_exhausted{0};  // bumped when a chunk fetch finds a loop done
    std::atomic<bool> seen{false};                  // runtime_started() called (again after fork)
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
};

extern State g_kmp_state;   // libomp (clang -fopenmp programs)
extern State g_gomp_state;  // libgomp (gcc -fopenmp programs)

// Team size for an outermost region that asked for `requested` threads (0 = the default).
// The program's own request (num_threads clause, omp_set_num_threads, OMP_NUM_THREADS) stays an
// upper bound; a default request gets the highest allotment of the last RecentMax::kCycles
// cycles (team_limit), up to APSHIM_P even above the core count.
// Before the first allotment, default teams get P threads, so that a program made of one long
// region starts wide and parking (parking.hpp) adapts it from there. While exact_teams(), and
// for a num_threads clause (requested > 0) unless dynamic_allowed(), the request is left alone
// (returns `requested`); threads beyond the allotment in such a team still park inside it.
int team_size(State& s, int requested) noexcept;

// team_size(), further capped so that the extra threads of all concurrent outermost teams stay
// within the limit (the root itself is always allowed: it is a master, already running), and
// reserved: `reserved` receives the extras taken, which the caller gives back with
// release_team() when the region ends. Returns 0 when the shim leaves the request alone.
int reserve_team(State& s, int requested, int& reserved) noexcept;
void release_team(State& s, int reserved) noexcept;

// The program's own thread-count setting if any (omp_set_num_threads or OMP_NUM_THREADS), else 0.
int user_thread_setting() noexcept;

// True after the program turned dynamic adjustment off itself (omp_set_dynamic(0), or
// OMP_DYNAMIC=false in its environment): teams then get exactly what the program asks for.
bool exact_teams() noexcept;

// True after the program turned dynamic adjustment on itself (omp_set_dynamic(1), OMP_DYNAMIC=true).
// Until then a num_threads clause is exact: OpenMP promises that many threads, and programs
// whose threads wait for each other hang with fewer (LLVM's omp_single_nowait and
// omp_sections_nowait spin until a fourth thread of num_threads(4) arrives; tests/peer).
bool dynamic_allowed() noexcept;

// `name` from the same library that defines `defined` (a real entry point found with
// RTLD_NEXT). With libomp and libgomp both loaded, RTLD_NEXT alone could answer omp_* from the
// wrong runtime (research/libomp-hooks.md). Null when not found.
void* symbol_beside(void* defined, const char* name) noexcept;

// Called by the hooks on every outermost fork: tells the shim the runtime is in use (again
// after fork()) and counts the region.
void note_fork(State& s, int team) noexcept;

}  // namespace apshim::omp_adapter
