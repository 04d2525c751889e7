// Per-thread busy accounting, the one copy every adapter uses: a thread's padded counters, the
// owner thread opening and closing its busy intervals, and the "is anyone else working right
// now" scan that parking's escape rules ask.
//
// Owner-thread writes only: a single writer, so plain loads and stores (relaxed), no locked
// read-modify-write per task or chunk. The controller reads the totals (SlotSampler); other
// threads read busy_since (others_busy). Times are TSC ticks (clock.hpp).
//
// Two ways of measuring, chosen per adapter by its `timing` flag (adapters/README.md):
//  - timed (while the job is throttled): the hooks open and close an interval around every task
//    and chunk, which parking's escape rules need as well;
//  - untimed (while the job runs no more threads than its allotment): the per-task hooks only
//    keep their nesting counts; a runtime's own threads are measured by their CPU clocks, read
//    by the controller once per cycle, and a thread that entered the runtime from outside (the
//    program's main thread, a pthread forking OpenMP regions) by one interval around each of
//    its outermost entries, so its serial code is not counted as the runtime's work (capped by its
//    CPU clock: a thread switched out or blocked there uses no processor; SlotSampler).
#pragma once

#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "adapters/adapter.hpp"
#include "adapters/common/clock.hpp"

namespace apshim {

class SlotPool;

struct alignas(64) ThreadCounters {
    std::atomic<std::uint64_t> busy_ns{0};     // completed busy intervals
    std::atomic<std::uint64_t> busy_since{0};  // start of the open busy interval, 0 when not busy
    std::atomic<std::uint64_t> events{0};      // tasks/chunks begun (activity indicator)
    // OpenMP, while timed: the program's runtime calls whose number the program fixes, however its
    // threads are scheduled (tasks made and run, chunks fetched, ordered turns, barriers and taskwaits
    // entered): progress marks for shim/confine_check.hpp. Unlike `events` (busy intervals begun,
    // which depend on how often threads go idle), confined and unconfined runs count the same.
    std::atomic<std::uint64_t> marks{0};
    // OpenMP, timed or not: the thread's arrivals at its regions' end barriers (libgomp's; libomp's
    // join barriers, told from loops' by ompt_hooks.cpp's ends_region), progress marks for the
    // idle and width checks only (shim/idle_check.hpp, shim/width_check.hpp: a program of many
    // short static regions, tesseract's LSTM, xtb's, makes no other). Not for the confinement
    // check: a program of a few large regions between bursts of small ones (GraphicsMagick's
    // blur) reads 4 in 0.5 s confined and 10 in a 15 ms probe that meets a burst, 40x "faster"
    // unconfined, from a change of phase.
    std::atomic<std::uint64_t> region_ends{0};
    // OpenMP: 1 while the thread is in its share of an outermost region and not at one of its
    // barriers, waits inside that share (taskwait) included: it still has its part to do.
    std::atomic<std::uint32_t> engaged{0};
    std::atomic<std::uint32_t> made_tasks{0};  // OpenMP: created a task in the current outermost region
    // libgomp, timed: tasks this thread handed to libgomp wrapped (gomp_hooks.cpp: wrapped_task),
    // and wrapped tasks it began (run_task), since its current outermost region began. Summed over
    // a team, the difference is what is queued and not yet begun (queued_in_team).
    std::atomic<std::uint64_t> tasks_handed{0};
    std::atomic<std::uint64_t> handed_begun{0};
    std::atomic<std::uint32_t> loops{0};       // libomp: dispatched loops begun in the current outermost region
    // OpenMP: 1 + loops while the thread is parked before a chunk (parking.hpp's park), else 0:
    // which parked teammates a thread that begins a loop is ahead of (teammate_parked_behind).
    std::atomic<std::uint32_t> parked_at_loop{0};
    // oneTBB: 1 while the thread is inside a task at all (waiting in it included), timed or not:
    // the stall valve's "someone sits inside a task" (tbb_adapter.cpp). Written when its task
    // nesting leaves or reaches 0 only. libomp: the same for a thread in its region's barrier
    // (ompt_hooks.cpp), whose taskwaits spin on its CPU: parking.hpp's wait_in_barrier counts it.
    std::atomic<std::uint8_t> in_task{0};
    // OpenMP: while parking.hpp's at_barrier holds the thread out of its barrier (or its implicit
    // task's taskwait: at_implicit_taskwait), its place in the order in which the held go in:
    // 1 + its CPU's rank where the job's threads are bound (Host::cpu_rank), kHeld where that is
    // not known; 0 while not held.
    static constexpr std::uint8_t kHeld = 255;
    std::atomic<std::uint8_t> held_at_barrier{0};
    // oneTBB: 1 when the owner is one of the runtime's own workers (a thread libtbb created,
    // adapters/tbb/thread_hooks.cpp), set at its creation: its waits are inside tasks.
    std::atomic<std::uint8_t> worker{0};
    std::atomic<const void*> team{nullptr};     // OpenMP: which outermost region (concurrent roots differ)
    // The owning thread's id (0 while free) and CPU clock, set by the claim: the controller reads
    // the clock of a runtime thread in untimed cycles (SlotSampler).
    std::atomic<int> tid{0};
    std::atomic<clockid_t> cpu_clock{};  // read while a new owner may be writing it: atomic
    std::atomic<std::uint64_t> exited_cpu_ns{0};  // CPU time of the slot's earlier owners, at their exit
    // 1: the owner entered the runtime from outside (it calls into it: TBB's outermost wait, an
    // OpenMP fork) rather than being one of its workers; untimed cycles count only its time
    // inside those entries.
    std::atomic<std::uint8_t> external{0};
    // Untimed cycles, an external thread: its completed outermost entries and the open one (TSC
    // ticks, 0 when outside), apart from the timed intervals that parking's rules read.
    std::atomic<std::uint64_t> outer_ns{0};
    std::atomic<std::uint64_t> outer_since{0};
    // Recycling (rare paths only, thread_slots.hpp): the owning thread's pointer to this slot
    // (null while free or when claimed without one; a mark of the pool's while claimed for a
    // thread that has not adopted it, or being taken back), the pool, this slot's index and the
    // next free slot's.
    std::atomic<ThreadCounters**> owner{nullptr};
    SlotPool* pool = nullptr;
    std::int32_t index = 0;
    std::atomic<std::int32_t> next_free{-1};
};

// An interval clock kept by its owner thread: a running total and the start of the open
// interval (0 when none). Two per slot: timed busy intervals, and an external thread's time
// inside its outermost calls.
namespace interval {
// A "time" that opens an interval without a start, or closes one without adding: its owner is
// inside it (since != 0, which is all parking's escape rules read), but nothing measures its
// length. oneTBB's hooks use it where parking needs the flags and the CPU clocks are the measure
// (adapters/tbb/tbb_state.hpp, stamping): a time-stamp counter read costs 20-40 cycles, four a
// task. Read as a start, it is never before `now`, so until() adds nothing for it either.
inline constexpr std::uint64_t kUnstamped = ~0ull;

inline void open(std::atomic<std::uint64_t>& since, std::uint64_t now) noexcept { since.store(now, std::memory_order_relaxed); }

// The open interval goes into the total (single writer: plain load + store).
inline void close(std::atomic<std::uint64_t>& total, std::atomic<std::uint64_t>& since, std::uint64_t now) noexcept {
    std::uint64_t start = since.load(std::memory_order_relaxed);
    if (start && now > start && now != kUnstamped) total.store(total.load(std::memory_order_relaxed) + (now - start), std::memory_order_relaxed);
    since.store(0, std::memory_order_relaxed);
}

// Any thread: the total up to `now`, an interval still open included.
inline std::uint64_t until(const std::atomic<std::uint64_t>& total, const std::atomic<std::uint64_t>& since,
                           std::uint64_t now) noexcept {
    std::uint64_t t = total.load(std::memory_order_relaxed), start = since.load(std::memory_order_relaxed);
    return start && start < now ? t + (now - start) : t;
}
}  // namespace interval

// The thread starts (begin_busy) or stops (end_busy) executing user work at `now`. `c` may be
// null (a thread beyond the slots).
inline void begin_busy(ThreadCounters* c, std::uint64_t now) noexcept {
    if (c) interval::open(c->busy_since, now);
}
inline void end_busy(ThreadCounters* c, std::uint64_t now) noexcept {
    if (c) interval::close(c->busy_ns, c->busy_since, now);
}

// An external thread enters (begin_outer) or leaves (end_outer) the runtime at its outermost
// level: untimed cycles count that time as its busy time (SlotSampler).
// Entering also asks back the processors the job lent while it was quiet (adapter.hpp).
inline void begin_outer(ThreadCounters* c, std::uint64_t now) noexcept {
    if (c) interval::open(c->outer_since, now);
    reclaim_if_lent();
}
inline void end_outer(ThreadCounters* c, std::uint64_t now) noexcept {
    if (c) interval::close(c->outer_ns, c->outer_since, now);
}
inline std::uint64_t outer_until(const ThreadCounters& c, std::uint64_t now) noexcept {
    return interval::until(c.outer_ns, c.outer_since, now);
}

// A counter only its owner thread writes: plain load + store, no locked instruction.
inline void bump(std::atomic<std::uint64_t>& n, std::uint64_t by = 1) noexcept {
    n.store(n.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
}

// One more task or chunk begun.
inline void count_event(ThreadCounters* c) noexcept {
    if (c) bump(c->events);
}

// One more progress mark (ThreadCounters::marks).
inline void count_mark(ThreadCounters* c) noexcept {
    if (c) bump(c->marks);
}

// `n` more region ends (ThreadCounters::region_ends).
inline void count_region_end(ThreadCounters* c, std::uint64_t n = 1) noexcept {
    if (c) bump(c->region_ends, n);
}

// Any thread: busy time of `c` up to `now`, an interval still open included.
inline std::uint64_t busy_until(const ThreadCounters& c, std::uint64_t now) noexcept {
    return interval::until(c.busy_ns, c.busy_since, now);
}

// Is a thread other than `self` inside user work right now? Reads the owners' busy_since words
// (ThreadSlots or anything indexable with used()): no shared counter is touched per task to
// answer this.
template <class Slots>
bool others_busy(Slots& slots, const ThreadCounters* self) noexcept {
    for (int i = 0, n = slots.used(); i < n; ++i)
        if (&slots[i] != self && slots[i].busy_since.load(std::memory_order_relaxed) != 0) return true;
    return false;
}

// CPU time (ns) the live owner of `c` has used so far, from its CPU clock, into `ns`; false, `ns`
// left alone, when the clock cannot be read (no live owner, or its thread ended).
inline bool read_owner_cpu(const ThreadCounters& c, std::uint64_t& ns) noexcept {
    return c.tid.load(std::memory_order_acquire) != 0 && read_clock_ns(c.cpu_clock.load(std::memory_order_relaxed), ns);
}
// The same, 0 when the clock cannot be read.
inline std::uint64_t owner_cpu_ns(const ThreadCounters& c) noexcept {
    std::uint64_t ns = 0;
    read_owner_cpu(c, ns);
    return ns;
}

// The CPU time of every slot's live owner, at the last two readings: two readings some time apart
// tell how many processors the threads really used in between (a thread that waits in user code
// by sleeping, nanosleep or a condition variable, reads busy on the intervals above but uses no
// CPU). Read by one thread at a time and at most once per `min_age_ns` for all the threads that
// ask: parked threads ask at every poll (parking.hpp's escape rule), and each reading every clock
// itself, and over its own last poll, cost threads x parked clock reads. A team of 256 on 2 CPUs
// (254 parked) spent 40% of its time in clock_gettime: 0.49 s natively, 1.3-4.5 s under the shim
// alone (fortieth session). A seqlock keeps the readings together.
class SharedCpuTotal {
public:
    struct Reading {
        std::uint64_t at_ns = 0;   // when it was read (0: never)
        std::uint64_t cpu_ns = 0;  // the owners' CPU time then
    };
    struct Window {
        Reading before, last;  // the reading before the last one, and the last one
        // Processors used between them; negative when there is no such stretch yet.
        double cpus() const noexcept {
            if (before.at_ns == 0 || last.at_ns <= before.at_ns) return -1;
            return static_cast<double>(last.cpu_ns > before.cpu_ns ? last.cpu_ns - before.cpu_ns : 0) /
                   static_cast<double>(last.at_ns - before.at_ns);
        }
    };

    // The last two readings, the clocks read afresh first when the last is min_age_ns old, and
    // kAgePerClockNs per clock (a reading costs a system call per thread: with 1000 threads,
    // readings every half millisecond took a CPU of their own), and nobody else is reading them;
    // no readings (cpus() negative) while another thread writes them.
    static constexpr std::uint64_t kAgePerClockNs = 10000;
    template <class Slots>
    Window read(Slots& slots, std::uint64_t now, std::uint64_t min_age_ns) noexcept {
        Window w;
        if (!latest(w)) return Window{};  // a reading being written: no answer now
        const int n = slots.used();
        const std::uint64_t age = std::max(min_age_ns, static_cast<std::uint64_t>(n) * kAgePerClockNs);
        if (now - w.last.at_ns < age || reading_.exchange(true, std::memory_order_acquire)) return w;
        Reading r{now, 0};
        for (int i = 0; i < n; ++i) r.cpu_ns += owner_cpu_ns(slots[i]);
        w = {w.last, r};
        seq_.fetch_add(1, std::memory_order_seq_cst);  // odd: being written
        store(w);
        seq_.fetch_add(1, std::memory_order_seq_cst);
        reading_.store(false, std::memory_order_release);
        return w;
    }

    // The parked threads' escape on CPU (adapters/omp/parking.hpp, adapters/tbb/task_hooks.cpp):
    // one thread may go on where the owners used less CPU than `limit` threads admit, by half a
    // processor, between the last two readings (read afresh where due, as read() says), and no
    // other caller went on for that reading.
    // `margin`: by this much instead (parking.hpp's barrier_cpu).
    template <class Slots>
    bool room_for_one(Slots& slots, std::uint64_t now, std::uint64_t min_age_ns, int limit,
                      double margin = 0.5) noexcept {
        const Window w = read(slots, now, min_age_ns);
        const double used = w.cpus();
        return used >= 0 && used < limit - margin && first_for(w);
    }

    // A thread room_for_one let go may keep going while the owners used no more CPU than `limit`
    // threads by half a processor between the last two readings (read afresh where due, as read()
    // says): they are held to the limit, with it among them (adapters/tbb/task_hooks.cpp,
    // keep_going). No reading now: no.
    template <class Slots>
    bool within(Slots& slots, std::uint64_t now, std::uint64_t min_age_ns, int limit) noexcept {
        const double used = read(slots, now, min_age_ns).cpus();
        return used >= 0 && used <= limit + 0.5;
    }

    // True for the first caller only of each last reading: a window that admits one more thread
    // lets one go, however many ask about it.
    bool first_for(const Window& w) noexcept {
        std::uint64_t claimed = claimed_.load(std::memory_order_relaxed);
        return claimed < w.last.at_ns && claimed_.compare_exchange_strong(claimed, w.last.at_ns);
    }

    // In a fork() child: a reader of the parent's may have been mid-way.
    void reset() noexcept {
        seq_.store(0, std::memory_order_relaxed);
        store(Window{});
        reading_.store(false, std::memory_order_relaxed);
        claimed_.store(0, std::memory_order_relaxed);
    }

protected:  // tests/unit/test_parking.cpp writes half a reading
    // The last two readings into `w`, or false where a writer is mid-way. Never a wait for the
    // writer: preempted between its two counts (a loaded machine, a team of 1000), it kept every
    // parked thread that polled spinning here for its whole time slice, a 1 s program at 5-6 CPU
    // s, 1 run in 10 beside another program (fifty-first session).
    bool latest(Window& w) const noexcept {
        for (int tries = 0; tries < 3; ++tries) {
            // Sequentially consistent throughout, without fences (TSan has none): a reading a
            // refresh at most every half millisecond, so the cost is nothing.
            std::uint32_t seq = seq_.load(std::memory_order_seq_cst);
            if (seq & 1) return false;
            w = {{at_[0].load(std::memory_order_seq_cst), cpu_[0].load(std::memory_order_seq_cst)},
                 {at_[1].load(std::memory_order_seq_cst), cpu_[1].load(std::memory_order_seq_cst)}};
            if (seq_.load(std::memory_order_seq_cst) == seq) return true;
        }
        return false;
    }
    void store(const Window& w) noexcept {
        at_[0].store(w.before.at_ns, std::memory_order_seq_cst);
        cpu_[0].store(w.before.cpu_ns, std::memory_order_seq_cst);
        at_[1].store(w.last.at_ns, std::memory_order_seq_cst);
        cpu_[1].store(w.last.cpu_ns, std::memory_order_seq_cst);
    }

    std::atomic<std::uint32_t> seq_{0};
    std::atomic<std::uint64_t> at_[2] = {0, 0}, cpu_[2] = {0, 0};
    std::atomic<bool> reading_{false};
    std::atomic<std::uint64_t> claimed_{0};  // the last reading a thread was let go on (first_for)
};

// The questions barrier parking asks about the other threads of `self`'s outermost region (a
// program may run several at once: OpenMP regions forked from TBB workers or pthreads).
inline bool teammate(const ThreadCounters& c, const ThreadCounters* self) noexcept {
    return &c != self && c.team.load(std::memory_order_relaxed) == self->team.load(std::memory_order_relaxed);
}

// Has a teammate of `self` begun more dispatched loops in their region than `self` has? Every
// thread meets a region's loops in the same order, so that teammate is ahead, past a loop
// `self` is still in, and with nowait loops it may wait for `self` to leave it.
// (Sequentially consistent with loop_started's count and the parked mark: a thread parking and a
// teammate beginning a loop at the same time, one of them sees the other, parking.hpp.)
template <class Slots>
bool teammate_ahead(Slots& slots, const ThreadCounters* self) noexcept {
    std::uint32_t mine = self->loops.load(std::memory_order_relaxed);
    for (int i = 0, n = slots.used(); i < n; ++i)
        if (teammate(slots[i], self) && slots[i].loops.load(std::memory_order_seq_cst) > mine) return true;
    return false;
}

// Is a teammate of `self` parked before a chunk of a loop older than the one `self` is in? Only
// such a one needs waking when `self` begins a loop (teammate_ahead is its question).
template <class Slots>
bool teammate_parked_behind(Slots& slots, const ThreadCounters* self) noexcept {
    std::uint32_t mine = self->loops.load(std::memory_order_relaxed);
    for (int i = 0, n = slots.used(); i < n; ++i) {
        std::uint32_t at = slots[i].parked_at_loop.load(std::memory_order_seq_cst);
        if (at != 0 && at - 1 < mine && teammate(slots[i], self)) return true;
    }
    return false;
}

// Adapter::activity() from the slots: a thread inside an outermost entry, a task or user work
// makes the job active; the external threads' completed outermost time changes with every
// entry that ended, the events with every timed task begun (a worker's task between two looks).
template <class Slots>
Activity activity_now(Slots& slots) noexcept {
    Activity a{false, 0};
    for (int i = 0, n = slots.used(); i < n; ++i) {
        const ThreadCounters& c = slots[i];
        if (c.outer_since.load(std::memory_order_relaxed) || c.in_task.load(std::memory_order_relaxed) ||
            c.busy_since.load(std::memory_order_relaxed))
            a.active = true;
        a.entries += c.outer_ns.load(std::memory_order_relaxed) + c.events.load(std::memory_order_relaxed);
    }
    return a;
}

// Is any thread inside a task (ThreadCounters::in_task)?
template <class Slots>
bool anyone_in_task(Slots& slots) noexcept {
    for (int i = 0, n = slots.used(); i < n; ++i)
        if (slots[i].in_task.load(std::memory_order_relaxed)) return true;
    return false;
}

// What `self`'s teammates are doing now, in one pass over the slots.
struct Teammates {
    int working = 0;            // engaged (above) or inside user work
    int waiting_in_tasks = 0;   // neither, but inside a task (ThreadCounters::in_task)
    bool engaged = false;       // one is engaged in its share of the region
    int engaged_count = 0;      // how many are
    bool making_tasks = false;  // one of the engaged has made a task there
    bool tasks_made = false;    // one has made a task in the region, engaged or not
    int in_barrier = 0;         // neither engaged nor held out of the barrier (at_barrier): in it
    int held = 0;               // held out of it
    int count = 0;              // teammates seen (started in the region: region_started)
    int unstarted = 0;          // OpenMP: teammates not started yet, read as engaged (parking.hpp: team_now)
    // Held out of it and ahead of `self` in an order all agree on: by held_at_barrier (the CPUs the
    // job is placed on first, where its threads are bound), then by slot; `self` placed as its own
    // held_at_barrier says (not held: last).
    int held_before = 0;
};

template <class Slots>
Teammates teammates_now(Slots& slots, const ThreadCounters* self) noexcept {
    Teammates m;
    const std::uint8_t self_held = self->held_at_barrier.load(std::memory_order_relaxed);
    const unsigned self_key = self_held ? self_held : 256u;
    for (int i = 0, used = slots.used(); i < used; ++i) {
        const ThreadCounters& c = slots[i];
        if (!teammate(c, self)) continue;
        ++m.count;
        bool engaged = c.engaged.load(std::memory_order_seq_cst) != 0;  // seq_cst: parking.hpp, at_barrier
        if (engaged || c.busy_since.load(std::memory_order_relaxed) != 0) ++m.working;
        else if (c.in_task.load(std::memory_order_relaxed)) ++m.waiting_in_tasks;
        m.engaged = m.engaged || engaged;
        m.engaged_count += engaged ? 1 : 0;
        const bool made = c.made_tasks.load(std::memory_order_relaxed) != 0;
        m.making_tasks = m.making_tasks || (engaged && made);
        m.tasks_made = m.tasks_made || made;
        const std::uint8_t held = c.held_at_barrier.load(std::memory_order_seq_cst);
        if (!engaged && !held) ++m.in_barrier;
        if (held) ++m.held;
        if (held && (held != self_key ? held < self_key : c.index < self->index)) ++m.held_before;
    }
    return m;
}

// Busy time of the teammates up to `now` (open intervals included): two reads some time apart
// tell whether any of them did user work in between.
template <class Slots>
std::uint64_t others_busy_total(Slots& slots, const ThreadCounters* self, std::uint64_t now) noexcept {
    std::uint64_t sum = 0;
    for (int i = 0, used = slots.used(); i < used; ++i)
        if (teammate(slots[i], self)) sum += busy_until(slots[i], now);
    return sum;
}

// Tasks that the team of `self` (itself included) handed to libgomp and nobody has begun yet
// (ThreadCounters::tasks_handed); 0 or less: none. Every count handed first, then every count
// begun: a task handed and begun between the two passes counts as begun only, so the result errs
// low (a held thread goes on early), never high.
template <class Slots>
std::int64_t queued_in_team(Slots& slots, const ThreadCounters* self) noexcept {
    std::uint64_t handed = 0, begun = 0;
    const int used = slots.used();
    for (int i = 0; i < used; ++i)
        if (&slots[i] == self || teammate(slots[i], self)) handed += slots[i].tasks_handed.load(std::memory_order_relaxed);
    for (int i = 0; i < used; ++i)
        if (&slots[i] == self || teammate(slots[i], self)) begun += slots[i].handed_begun.load(std::memory_order_relaxed);
    return static_cast<std::int64_t>(handed - begun);
}

// Progress marks of the teammates (ThreadCounters::marks): two reads some time apart tell whether
// any of them made or ran a task, or entered a wait, in between.
template <class Slots>
std::uint64_t others_marks(Slots& slots, const ThreadCounters* self) noexcept {
    std::uint64_t sum = 0;
    for (int i = 0, used = slots.used(); i < used; ++i)
        if (teammate(slots[i], self)) sum += slots[i].marks.load(std::memory_order_relaxed);
    return sum;
}

}  // namespace apshim
