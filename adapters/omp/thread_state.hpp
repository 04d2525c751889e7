// What one runtime thread is doing right now, as a stack of frames: work (an implicit task, an
// explicit task, the thread's share of a region) or wait (barrier, taskwait, loop end, parked).
// The thread is busy while its top frame is work, so a task run inside a barrier or a taskwait
// counts as work and the wait around it does not (research/libomp-hooks.md). Busy intervals
// go to the thread's padded slot in TSC ticks; the controller sums them (SlotSampler).
// Owner-thread only: no locks, no allocation, relaxed stores.
#pragma once

#include <cstdint>

#include "adapters/common/busy.hpp"
#include "adapters/common/clock.hpp"
#include "adapters/omp/omp_state.hpp"

namespace apshim::omp_adapter {

// The per-task path (a few callbacks per task, tests/cost counts its instructions): kept inline
// in the hooks, which gcc stops doing on its own once the callers grow.
#define APSHIM_HOT __attribute__((always_inline))

struct ThreadState {
    static constexpr int kTracked = 256;  // deeper frames (deep task recursion) count as work
    ThreadCounters* counters = nullptr;
    std::uint32_t generation = 0;
    int depth = 0;
    std::uint64_t wait_bits[kTracked / 64] = {};  // bit set: that frame is a wait
    std::uint64_t task_bits[kTracked / 64] = {};  // bit set: that frame is an explicit task's body
    const void* tags[kTracked] = {};              // the task a work frame belongs to (OMPT), or null
    const void* from[kTracked] = {};              // a task frame: the task the thread was in when it began
    int team_index = 0;  // in the innermost implicit task (OMPT), for parking decisions
    int level = 0;       // nesting of implicit tasks (OMPT): 1 = outermost region
    bool external = false;  // forks outermost regions (busy.hpp): untimed, only its time in them counts
    // libomp: in an outermost region's barrier (OMPT, between its wait's begin and end); the
    // task_schedule events on the thread (a task or an untied task's part begins or ends), and
    // their count at its last sched_yield in a region: parking.hpp's yield_in_region tells a
    // thread between two tasks from one that found none.
    bool at_outer_barrier = false;
    std::uint64_t next_barrier_look = 0;  // TSC ticks: parking.hpp's yield_in_region looks again from then
    std::uint64_t task_events = 0;
    std::uint64_t task_events_at_yield = 0;
    // The CPU escape let it go from its barrier: it goes on while the team uses no more CPU than
    // its limit by half a processor (parking.hpp: wait_in_barrier).
    bool cpu_pass = false;
    // libgomp: the size of the thread's outermost team (run_region), 0 where not known.
    int team_size = 0;
    // libgomp: the team (ThreadCounters::team) in which at_implicit_taskwait waited out its
    // teammates' arrival once, and they stayed in their share: it waits no more there.
    const void* arrivals_waited = nullptr;
};

inline bool frame_is_wait(const ThreadState& t, int i) noexcept {
    return i < ThreadState::kTracked && ((t.wait_bits[i / 64] >> (i % 64)) & 1u);
}

inline bool is_busy(const ThreadState& t) noexcept { return t.depth > 0 && !frame_is_wait(t, t.depth - 1); }

// The thread is in an explicit task's body now (not in a wait inside it, not in an implicit
// task); frames past kTracked come only from deep task recursion, so they count as tasks.
inline bool in_explicit_task(const ThreadState& t) noexcept {
    int i = t.depth - 1;
    if (i < 0) return false;
    return i >= ThreadState::kTracked || ((t.task_bits[i / 64] >> (i % 64)) & 1u);
}

// The thread's slot, claimed on first use and again after fork() (the child forgets all slots)
// or after the thread's exit handler gave it back (a hook running late in the thread's exit).
APSHIM_HOT inline bool attached(const State& s, const ThreadState& t) noexcept {
    return t.counters && t.generation == s.fork_generation.load(std::memory_order_relaxed);
}

APSHIM_HOT inline void attach(State& s, ThreadState& t) noexcept {
    std::uint32_t gen = s.fork_generation.load(std::memory_order_relaxed);
    if (t.counters && t.generation == gen) return;
    t.counters = s.slots.claim(&t.counters);  // given back when this thread exits
    if (t.counters) {
        t.counters->engaged.store(0, std::memory_order_relaxed);
        t.counters->made_tasks.store(0, std::memory_order_relaxed);
        t.counters->tasks_handed.store(0, std::memory_order_relaxed);
        t.counters->handed_begun.store(0, std::memory_order_relaxed);
        t.counters->in_task.store(0, std::memory_order_relaxed);
        t.counters->team.store(nullptr, std::memory_order_relaxed);
    }
    t.generation = gen;
    t.depth = 0;
    t.external = false;
    t.at_outer_barrier = false;
    t.cpu_pass = false;
}

// libomp, in its region's barrier: whether the thread is inside a task now (frames above the
// barrier's wait), published to its teammates when that changes (ThreadCounters::in_task).
APSHIM_HOT inline void note_in_task(ThreadState& t, bool in_task) noexcept {
    const std::uint8_t v = in_task ? 1 : 0;
    if (t.counters && t.counters->in_task.load(std::memory_order_relaxed) != v)
        t.counters->in_task.store(v, std::memory_order_relaxed);
}

// Untimed (busy.hpp), the frames are kept but not timed; an interval the timed hooks left open
// is closed, so that parking's rules never read a stale one. `timed` is s.timing, read once by
// the caller before the frame changed (untimed, `was_busy` is not computed: every task's hooks
// pass here).
APSHIM_HOT inline void account(ThreadState& t, bool timed, bool was_busy) noexcept {
    if (!t.counters) return;
    if (!timed) {
        if (t.counters->busy_since.load(std::memory_order_relaxed)) [[unlikely]]
            end_busy(t.counters, now_ticks());
        return;
    }
    bool busy = is_busy(t);
    if (busy == was_busy) return;
    std::uint64_t now = now_ticks();
    if (busy) {
        count_event(t.counters);
        begin_busy(t.counters, now);
    } else {
        end_busy(t.counters, now);
    }
}

// At a hook that changes no frame (a chunk fetch): a thread that was already busy when timing
// came on (a co-runner arrived mid-region) has no open interval until its next frame change,
// and one long region of dynamic loops would leave it unmeasured for the rest of the region
// (its busy time read as none). Timed, open it here.
APSHIM_HOT inline void resume_timing(State& s, ThreadState& t) noexcept {
    if (!t.counters || !s.timing.load(std::memory_order_relaxed)) return;
    if (t.counters->busy_since.load(std::memory_order_relaxed) == 0 && is_busy(t)) [[unlikely]] {
        count_event(t.counters);
        begin_busy(t.counters, now_ticks());
    }
}

// A progress mark (a task made or run, a chunk fetched, an ordered turn taken, a barrier or taskwait
// entered), counted while timed: how far the job gets per CPU-second tells the controller whether
// confinement slows its hand-overs (Sample::marks, shim/confine_check.hpp). One relaxed load
// untimed.
APSHIM_HOT inline void note_progress(const State& s, ThreadState& t) noexcept {
    if (s.timing.load(std::memory_order_relaxed)) count_mark(t.counters);
}

// A thread's arrival at its region's end barrier (libgomp's, and libomp's join barrier: ompt_hooks.cpp,
// ends_region), timed or not: ThreadCounters::region_ends. Untimed too, because the width check
// (shim/width_check.hpp) judges a job at its full allotment, which is not timed; one store per
// region and thread, against a region's fork and barrier.
APSHIM_HOT inline void note_region_end(const State&, ThreadState& t) noexcept {
    count_region_end(t.counters);
}

// On the forking thread, once per outermost region whose team the shim or the runtime could
// shrink (`asked`: whole_team_asked() > 0): the arrivals of the threads the region asked for but
// did not get (`actual`: its team), so that a region counts as the same progress at any team size.
// A width probe runs such a job at the narrow width with narrower teams (shim/controller.cpp):
// counted per arrival, each region read half as far on half the CPUs, and a job of short regions
// beside a CPU hog was never narrowed although its teams of one went faster.
inline void note_missing_arrivals(ThreadState& t, int asked, int actual) noexcept {
    if (asked > actual) count_region_end(t.counters, static_cast<std::uint64_t>(asked - actual));
}

// An external thread's time inside the runtime (frames on its stack at all): its busy time in
// untimed cycles. One timestamp per outermost entry, so per region, not per task.
APSHIM_HOT inline void account_outer(ThreadState& t, int old_depth) noexcept {
    if (!t.external || !t.counters || (old_depth == 0) == (t.depth == 0)) return;
    if (t.depth > 0) begin_outer(t.counters, now_ticks());
    else end_outer(t.counters, now_ticks());
}

// `tag`: the task whose body (or share of a region) the frame stands for, when the runtime names
// it (OMPT task data); null for waits and where it does not. `task`: the frame is an explicit
// task's body.
// `from`: for a task, the task the thread was in when it began it (task_schedule's prior).
// Frame `depth` (>= 0) as given; frames past kTracked keep nothing.
APSHIM_HOT inline void set_frame(ThreadState& t, int depth, bool wait, const void* tag, bool task,
                                 const void* from = nullptr) noexcept {
    auto i = static_cast<unsigned>(depth);  // unsigned: / and % by 64 are a shift and a mask
    if (i < ThreadState::kTracked) {
        std::uint64_t bit = std::uint64_t{1} << (i % 64);
        t.wait_bits[i / 64] = wait ? (t.wait_bits[i / 64] | bit) : (t.wait_bits[i / 64] & ~bit);
        t.task_bits[i / 64] = task ? (t.task_bits[i / 64] | bit) : (t.task_bits[i / 64] & ~bit);
        t.tags[i] = tag;
        t.from[i] = from;
    }
}

APSHIM_HOT inline void push_frame(State& s, ThreadState& t, bool wait, const void* tag = nullptr,
                                  bool task = false, const void* from = nullptr) noexcept {
    attach(s, t);
    bool timed = s.timing.load(std::memory_order_relaxed);
    bool was = timed && is_busy(t);
    int i = t.depth++;
    set_frame(t, i, wait, tag, task, from);
    account(t, timed, was);
    account_outer(t, i);
}

APSHIM_HOT inline void pop_frame(State& s, ThreadState& t) noexcept {
    attach(s, t);
    if (t.depth == 0) return;  // an end without its begin (tool attached mid-region, or fork)
    bool timed = s.timing.load(std::memory_order_relaxed);
    bool was = timed && is_busy(t);
    --t.depth;
    account(t, timed, was);
    account_outer(t, t.depth + 1);
}

// Pops frames until `depth` are left.
APSHIM_HOT inline void pop_frames_above(State& s, ThreadState& t, int depth) noexcept {
    while (t.depth > depth) pop_frame(s, t);
}

// libomp's per-task callbacks (ompt_hooks.cpp) look at the thread once and then move the frame
// stack alone (bare_frames below), instead of attaching, reading s.timing and checking the
// interval at every frame change: libomp reports three switches and an end for each untied task
// it runs at once (BOTS fib-final makes millions). A hook goes this way when the thread is
// attached since the last fork and, untimed, has no interval left open (a job alone: nearly
// always; one left open is closed on the full path). Untimed, nothing else moves. Timed, the busy
// interval follows once at the hook's end (bare_hook_done), from the state at its start: where a
// hook's changes flip busy and back (a leftover part dropped down to a wait, then a task pushed),
// the interval stays open instead of closing and reopening at the same moment (one event fewer:
// an activity sign). Only the controller turns timing on or off, so it is read once; a change
// meanwhile is seen from the next hook on (accuracy, as a frame change's own read of s.timing).
struct BareHook {
    bool may = false;       // bare_frames() may move the stack
    bool timed = false;     // s.timing at the hook's start
    bool was_busy = false;  // timed: is_busy() at the hook's start
};
APSHIM_HOT inline BareHook bare_hook(const State& s, const ThreadState& t) noexcept {
    BareHook h;
    if (!attached(s, t)) return h;
    h.timed = s.timing.load(std::memory_order_relaxed);
    if (!h.timed && t.counters->busy_since.load(std::memory_order_relaxed) != 0) [[unlikely]] return h;
    h.may = true;
    h.was_busy = h.timed && is_busy(t);
    return h;
}

// After bare_frames() moved the stack: timed, the interval follows; `mark`, a progress mark too
// (note_progress: a task ended, a taskwait entered).
APSHIM_HOT inline void bare_hook_done(ThreadState& t, const BareHook& h, bool mark) noexcept {
    if (!h.timed) return;
    account(t, true, h.was_busy);
    if (mark) count_mark(t.counters);
}

// The frame changes of OMPT's events. `switch_task`: task_schedule's switch from `current` to
// `tag`. Either a task begins (pushed, remembering `current` as where it came from), or a part of
// an untied task returns to the task it began from: libomp reports that as a switch back when it
// queues the task's next part (__kmpc_omp_task: `ompt_task_switch` to the task's scheduling
// parent), and that part's frame goes. Pushing the task returned to instead left a work frame
// that read busy over a thread back in its barrier or taskwait, and a later task's end popped
// the wait below it: 4 million waits popped in a BOTS uts run of 1.2 s, and a thread inside two
// nested taskwaits read as in its barrier with no task. A part run at once from its own queueing
// (a switch from the task to itself) begins over the part that queued it, dropping nothing.
enum class FrameChange { none, push_task, push_wait, pop, switch_task };

// A task switch returns from the frame on top (depth `d` > 0) to where it began.
APSHIM_HOT inline bool returns_from_top(const ThreadState& t, int d, const void* current, const void* next) noexcept {
    return d <= ThreadState::kTracked && t.tags[d - 1] == current && t.from[d - 1] == next;
}

// A per-task hook's frame change on the stack alone, where bare_hook() allows: drop_parts_not_of()
// below for `current`, then `change`. The same frames as the full path; false, changing nothing,
// where the depth would reach 0 (an external thread's outer interval moves there) or pass
// kTracked: the full path then.
APSHIM_HOT inline bool bare_frames(ThreadState& t, const void* current, FrameChange change,
                                   const void* tag = nullptr) noexcept {
    int d = t.depth;
    if (d > ThreadState::kTracked) return false;
    if (change != FrameChange::switch_task || current != tag) {
        while (d > 0) {
            const void* top = t.tags[d - 1];
            if (top == nullptr || top == current) break;
            if (d == 1) return false;
            --d;
        }
    }
    switch (change) {
    case FrameChange::none: break;
    case FrameChange::switch_task:
        if (d > 0 && returns_from_top(t, d, current, tag)) {
            if (d <= 1) return false;
            --d;
            break;
        }
        [[fallthrough]];
    case FrameChange::push_task:
    case FrameChange::push_wait:
        if (d == 0 || d >= ThreadState::kTracked) return false;
        set_frame(t, d++, change == FrameChange::push_wait, tag, change != FrameChange::push_wait, current);
        break;
    case FrameChange::pop:
        if (d <= 1) return false;
        --d;
        break;
    }
    t.depth = d;
    return true;
}

// Drops the work frames on top that belong to a task other than `current`, the task the runtime
// says this thread is in now; stops at a wait or at `current`'s own frame: a frame left by an
// event the runtime did not report (an untied part's return where it reports none: libomp 14
// reports it as a switch, FrameChange::switch_task) would read busy for good (BOTS fib, untied:
// threads waiting in a barrier measured as working).
// Waits carry no tag, so the usual case (a wait or `current`'s own frame on top) is one load.
APSHIM_HOT inline void drop_parts_not_of(State& s, ThreadState& t, const void* current) noexcept {
    for (;;) {
        int d = t.depth;
        if (d <= 0) return;
        if (d <= ThreadState::kTracked) {
            const void* top = t.tags[d - 1];
            if (top == nullptr || top == current) return;
        }
        pop_frame(s, t);  // a leftover part (or an untracked frame, where such parts pile up)
    }
}

// bare_frames()'s change the full way: the frames, the intervals and the outer interval follow at
// each step (the callbacks' slow path, and what the bare one must equal: tests/unit/test_frames.cpp).
APSHIM_HOT inline void change_frames(State& s, ThreadState& t, const void* current, FrameChange change,
                                     const void* tag = nullptr) noexcept {
    if (change != FrameChange::switch_task || current != tag) drop_parts_not_of(s, t, current);
    switch (change) {
    case FrameChange::none: break;
    case FrameChange::switch_task:
        if (t.depth > 0 && returns_from_top(t, t.depth, current, tag)) {
            pop_frame(s, t);
            break;
        }
        [[fallthrough]];
    case FrameChange::push_task: push_frame(s, t, /*wait=*/false, tag, /*task=*/true, current); break;
    case FrameChange::push_wait: push_frame(s, t, /*wait=*/true); break;
    case FrameChange::pop: pop_frame(s, t); break;
    }
}

// The calling thread forks outermost regions: it came from outside the runtime (busy.hpp).
inline void mark_external(State& s, ThreadState& t) noexcept {
    attach(s, t);
    if (t.external || !t.counters) return;
    t.external = true;
    t.counters->external.store(1, std::memory_order_relaxed);
}

// The thread starts (true) or ends (false) its part of an outermost region's work: between its
// implicit task's start and a barrier, between a barrier and the next one or the region's end.
inline void set_engaged(State& s, ThreadState& t, bool engaged) noexcept {
    attach(s, t);
    // Sequentially consistent: parking.hpp's at_barrier (two arrivals see each other).
    if (t.counters) t.counters->engaged.store(engaged ? 1 : 0, std::memory_order_seq_cst);
}

// The thread starts its share of a new outermost region, `team` (any address its threads share):
// engaged, no task made there yet.
inline void region_started(State& s, ThreadState& t, const void* team) noexcept {
    attach(s, t);
    if (!t.counters) return;
    // The counts first, then the team: a new teammate is not read with its last region's counts.
    t.counters->tasks_handed.store(0, std::memory_order_relaxed);
    t.counters->handed_begun.store(0, std::memory_order_relaxed);
    t.counters->team.store(team, std::memory_order_release);
    t.counters->made_tasks.store(0, std::memory_order_relaxed);
    t.counters->loops.store(0, std::memory_order_relaxed);
    t.counters->engaged.store(1, std::memory_order_release);
}

// Untimed (busy.hpp), a wait inside another frame (a taskwait in a region or a task) may skip its
// own frame: untimed nothing reads a frame's wait bit (is_busy only times, in_explicit_task only
// matters for wrapped tasks, which are timed), and only an outermost frame moves an external
// thread's outer interval. The caller decides once and, if so, pushes and pops nothing, so the
// depth stays consistent. Timing coming on during such a wait reads the thread as in the frame
// below (busy) until the wait returns: accuracy, for that one wait. An interval the timed hooks
// left open takes the framed path, which closes it (account), as before.
APSHIM_HOT inline bool plain_nested_wait(const State& s, const ThreadState& t) noexcept {
    return t.depth > 0 && !s.timing.load(std::memory_order_relaxed) && t.counters &&
           t.counters->busy_since.load(std::memory_order_relaxed) == 0;
}

// The thread, attached since the last fork, already told its teammates that it makes tasks in
// this region (made_task below has nothing to do).
APSHIM_HOT inline bool made_task_noted(const State& s, const ThreadState& t) noexcept {
    return attached(s, t) && t.counters->made_tasks.load(std::memory_order_relaxed) != 0;
}

// The thread creates a task (once per region reaches other threads: a relaxed load otherwise).
APSHIM_HOT inline void made_task(State& s, ThreadState& t) noexcept {
    if (made_task_noted(s, t)) return;
    attach(s, t);
    if (t.counters) t.counters->made_tasks.store(1, std::memory_order_relaxed);
}

// RAII for the entry points that are wholly a wait (GOMP_barrier, GOMP_taskwait...) or wholly
// work (a region's outlined function, a task body).
class Frame {
public:
    Frame(State& s, ThreadState& t, bool wait, bool task = false) noexcept : s_(s), t_(t) {
        push_frame(s, t, wait, nullptr, task);
    }
    ~Frame() { pop_frame(s_, t_); }
    Frame(const Frame&) = delete;
    Frame& operator=(const Frame&) = delete;

private:
    State& s_;
    ThreadState& t_;
};

}  // namespace apshim::omp_adapter

namespace apshim::omp_adapter {
// The calling thread's state in libomp (ompt_hooks.cpp owns it; kmp_hooks.cpp parks with it).
ThreadState& kmp_thread_state() noexcept;
// `t`, the calling thread, is in an outermost barrier (at_outer_barrier): whether libomp says
// its current task is its implicit one (no explicit task running or suspended on it, through
// OMPT; false where it cannot say), and if so its frames made to say so too (that task's work,
// the barrier's wait above it).
bool kmp_no_task_in_barrier(State& s, ThreadState& t) noexcept;
}  // namespace apshim::omp_adapter

namespace apshim::omp_adapter {
// kmp_hooks.cpp, at an outermost fork: the calling thread reserved `reserved` extra threads for
// the region it is about to start; ompt_hooks.cpp gives them back when the region ends, and calls
// `dynamic_back` (libomp's omp_set_dynamic, or null) with 1 there: the fork turned the thread's
// dyn-var off for a library that needs its whole team (whole_team.hpp), and end_spinning_team()
// where begin_spinning_team() counted the region open (`spinning`).
void kmp_outermost_fork(int reserved, void (*dynamic_back)(int) = nullptr, int asked = 0, bool spinning = false) noexcept;
// libomp (kmp_hooks.cpp), on a thread entering a sections construct of `sections` sections: on the
// forking thread of an outermost region, the first time, the threads that run them at once are
// counted until the region ends (whole_team.hpp: begin_sections_team).
void kmp_sections_begin(long sections) noexcept;
}  // namespace apshim::omp_adapter
