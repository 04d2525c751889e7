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
    // The limit last set (the runtime's own default before any set_active).
    virtual int active() const = 0;
    // Controller thread or exit: wake every parked thread and stop throttling for good.
    virtual void release() = 0;
};

// Implemented by shim/. An adapter calls it the first time its runtime is used in this process
// (or again after fork in the child). Cheap and lock-free after the first call; safe to call
// from inside runtime internals; starts the controller thread on first use.
void runtime_started(Adapter& adapter) noexcept;

// Implemented by shim/: the processor count the shim was configured with (APSHIM_P or the
// machine's), so an adapter can size a runtime's default team to it. 0 when the shim is disabled.
int configured_processors() noexcept;

// Implemented by shim/: the estimation interval in nanoseconds (for parking time-outs).
std::uint64_t est_cycle_ns() noexcept;

}  // namespace apshim

namespace apshim {
// Implemented by shim/: false when APSHIM_DISABLE=1 (or the shim refused to start). Adapters'
// constructors run after the shim's (constructor priority 101 for shim/, 110+ for adapters)
// and must do nothing at all when this is false.
bool shim_enabled() noexcept;
}  // namespace apshim

namespace apshim {
// Implemented by shim/ (shim/env.hpp): before main, set a runtime's environment variable to the
// shim's default unless the user chose a value (and remember it as the shim's, so that programs
// started without the shim do not inherit it); and whether the user chose one.
void env_default(const char* name, const char* value) noexcept;
bool env_chosen_by_user(const char* name) noexcept;

// Implemented by shim/: APSHIM_SHRINK_TEAMS=1, the user's promise that this program's default
// OpenMP teams may be narrower than omp_get_max_threads() even while dynamic adjustment is off.
bool shrink_teams_opted_in() noexcept;
}  // namespace apshim

namespace apshim {
// Implemented by shim/: false while confinement (shim/confine.hpp) holds the job's threads to
// its allotment's CPUs. Parking at safe points is then only a cost: a thread parked before its
// next chunk comes back up to one escape poll (1 ms) late, and with a teammate spinning on a
// user-level flag (NPB LU's pipeline) up to a second late: LU.S at allotment 1 took 13-17 s
// instead of 0.17 s confined without parking. Lock-free (one atomic load).
bool parking_wanted() noexcept;
}  // namespace apshim
