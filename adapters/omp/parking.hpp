// Parking inside long regions: a thread whose team index is at or beyond the allotment waits
// before it fetches a dynamic/guided chunk (it holds no iteration there), so a running region's
// busy threads shrink to the allotment, and grow back when the allotment rises. Never before a
// task body: the thread has dequeued the task, and a teammate may wait for it in a taskwait
// (BOTS stalled for minutes); confinement (shim/confine.hpp) enforces the allotment there.
// Runs inside the runtime's threads: no locks, no allocation.
//
// Escape rule (research/libomp-hooks.md: without one, programs hang, because a parked thread
// may hold what its teammates wait for: a task it already dequeued, a tied continuation, its
// arrival at a barrier). A parked thread goes on when
//   - the allotment admits it (set_active wakes the lot), or
//   - any thread finds a loop exhausted (its own fetch will then say "no more chunks"), or
//   - no other thread of the runtime is executing work (everyone else waits for something,
//     possibly for us): polled every kRecheckNs, or
//   - the team used less CPU than the limit admits, by half a processor, between the last two
//     readings of their CPU clocks (SharedCpuTotal, at least half a kRecheckNs apart): they are
//     not executing work the way the intervals say, but wait in user code by sleeping (LLVM's
//     guided-schedule test waits up to 5 ms per iteration for a teammate to take the next one),
//     and the allotment has room for one more thread anyway. One thread per reading: on a loaded
//     machine the working threads wait for a CPU, which their clocks read as sleeping, and
//     letting every parked thread go on that (a team of 1000, throttled with parking only, beside
//     another program) took a 1 s program to 5-6 CPU s, 1 run in 10 (fifty-first session), or
//   - a teammate is ahead, in a later dispatched loop of the region (loop_started wakes the
//     lot): with nowait loops a thread runs ahead and then waits, in libomp, for its teammates
//     to leave an older loop's dispatch buffer (LLVM's kmp_set_dispatch_buf test); a thread
//     with a teammate ahead does not park at all, or
//   - confinement came into force (Host::parking_wanted, adapter.hpp: the controller lowers the
//     limit a moment before it confines the threads, and a thread may park in between), or
//   - kMaxWaits polls or kMaxParkNs passed (a bound, so a mistake costs time, never a hang).
// With many threads parked each polls less often (ParkBounds::shared_polls), and the first to find
// a reason that holds for every parked thread wakes them all.
// The master (team index 0) never parks; static and ordered loops are never parked (their
// iterations, or their turns, are pre-assigned: a parked thread would hold what its teammates
// wait for). Nobody parks while confinement is in force.
#pragma once

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>

#include "adapters/common/busy.hpp"
#include "adapters/common/park.hpp"
#include "adapters/omp/omp_state.hpp"
#include "adapters/omp/thread_state.hpp"

namespace apshim::omp_adapter {

constexpr std::uint64_t kRecheckNs = 1000000;  // escape-rule poll: at most 1 ms of extra delay
constexpr int kMaxWaits = 1000;                // one park lasts about a second at most
constexpr std::uint64_t kMaxParkNs = kMaxWaits * kRecheckNs;
// Polls of all the threads parked before chunks, together, per kRecheckNs (park()).
constexpr int kPollsPerRecheck = 8;
constexpr std::uint64_t kIdleNs = 20000000;     // barrier parking: others idle this long
constexpr std::uint64_t kMaxBarrierHoldNs = 10000000000ull;  // at_barrier: however the others progress
constexpr double kBarrierCpuMargin = 1.0 / 3;  // at_barrier's CPU rule: the job used less than limit - this
constexpr std::uint64_t kTaskWaitNs = 100000;   // barrier parking: how long a first arrival looks for tasks
constexpr std::uint64_t kFirstAllotmentNs = 20000000;  // the first barrier waits this long for it, once
constexpr std::uint64_t kBarrierLookTicks = 250;  // yield_in_region, per slot: about 100 ns at 2-3 GHz

inline bool beyond_limit(State& s, int index) noexcept {
    int limit = s.limit.load(std::memory_order_relaxed);
    return limit > 0 && index >= limit;
}

// Many parked threads poll less often each, about kPollsPerRecheck polls a kRecheckNs in all;
// a stay lasts kMaxWaits polls or kMaxParkNs at most.
constexpr ParkBounds kSharedPollBounds{kRecheckNs, kMaxWaits, kMaxParkNs, kPollsPerRecheck};
// at_barrier's: as long as the teammates progress, up to kMaxBarrierHoldNs (at_barrier says why).
constexpr ParkBounds kBarrierHoldBounds{kRecheckNs, INT_MAX, kMaxBarrierHoldNs, kPollsPerRecheck};

inline void park(State& s, ThreadState& t, int index) noexcept {
    push_frame(s, t, /*wait=*/true);  // parked time is not work, for us and for the escape rule
    std::uint32_t loops_seen = s.loops_exhausted.load(std::memory_order_acquire);
    // Many parked threads poll less often each, about kPollsPerRecheck polls a kRecheckNs in all,
    // and one that finds a reason for the whole team to go on (nobody working, confinement in
    // force) wakes the rest: 999 threads polling every millisecond took a 0.63 s program (1000
    // threads on 2 CPUs) to 4.6 s alone with parking only (fortieth session). The reasons of its
    // own (the allotment, a loop exhausted or begun) wake the lot where they happen; the team's
    // CPU below its limit is room for one thread, not for all.
    // Marked before the escape rules are first asked, so that a teammate beginning a loop meanwhile
    // either is seen by teammate_ahead or sees the mark (loop_started).
    ThreadCounters* c = t.counters;
    s.parked_before_chunks.fetch_add(1, std::memory_order_seq_cst);
    c->parked_at_loop.store(c->loops.load(std::memory_order_relaxed) + 1, std::memory_order_seq_cst);
    park_until(s.lot, s.parked, kSharedPollBounds, [&] {
        if (!beyond_limit(s, index) || s.loops_exhausted.load(std::memory_order_acquire) != loops_seen ||
            teammate_ahead(s.slots, t.counters))
            return true;
        if (!others_busy(s.slots, t.counters) || !host().parking_wanted()) {
            if (s.parked.load(std::memory_order_relaxed) > 0) s.lot.wake_all();
            return true;
        }
        // The team's CPU use over the last two readings shared by every parked thread
        // (SharedCpuTotal): a parked thread's own share of it is its polls.
        return s.cpu_total.room_for_one(s.slots, now_ns(), kRecheckNs / 2, s.limit.load(std::memory_order_relaxed));
    });
    c->parked_at_loop.store(0, std::memory_order_relaxed);
    s.parked_before_chunks.fetch_sub(1, std::memory_order_relaxed);
    pop_frame(s, t);
}

// Before a thread takes new work. `level` 1 = a thread of an outermost region; nested teams
// are left alone (their size is the program's business).
inline void park_if_surplus(State& s, ThreadState& t, int index, int level) noexcept {
    if (level != 1 || index <= 0 || !beyond_limit(s, index) || !host().parking_wanted()) return;
    attach(s, t);
    if (t.counters && !teammate_ahead(s.slots, t.counters)) park(s, t, index);
}

// How long a reading of the teammates has stayed the same, read between two polls of one thread.
class SameSince {
public:
    explicit SameSince(std::uint64_t value) noexcept : since_(now_ns()), value_(value) {}
    std::uint64_t ns(std::uint64_t value) noexcept {
        const std::uint64_t now = now_ns();
        if (value != value_) {
            value_ = value;
            since_ = now;
        }
        return now - since_;
    }

private:
    std::uint64_t since_, value_;
};

// Barrier parking's idle rule: the teammates of `self` did no work at all for kIdleNs, their busy
// time (which grows while a task runs, open intervals included) unchanged since. A thread between
// two tasks is idle for an instant only. Read between two polls of one thread, so with many parked
// it sees idle others up to a poll interval later (125 ms with 1000 parked, where every poll of
// each would cost the team a look at 1000 teammates).
class OthersIdle {
public:
    OthersIdle(State& s, const ThreadCounters* self) noexcept
        : s_(s), self_(self), busy_(others_busy_total(s.slots, self, now_ticks())) {}
    bool for_idle_ns() noexcept { return busy_.ns(others_busy_total(s_.slots, self_, now_ticks())) >= kIdleNs; }

private:
    State& s_;
    const ThreadCounters* self_;
    SameSince busy_;
};

// Barrier parking's stuck rule: the teammates of `self` made no progress mark (tasks made and
// run, waits entered: busy.hpp, ThreadCounters::marks) for kMaxParkNs. Busy all the same, they may
// be spinning on what only a thread in the barrier would do: a flag that a queued task sets.
class OthersStuck {
public:
    OthersStuck(State& s, const ThreadCounters* self) noexcept
        : s_(s), self_(self), marks_(others_marks(s.slots, self)) {}
    bool for_max_park_ns() noexcept { return marks_.ns(others_marks(s_.slots, self_)) >= kMaxParkNs; }

private:
    State& s_;
    const ThreadCounters* self_;
    SameSince marks_;
};

// A first arrival at a barrier, looking for its teammates' tasks for a moment (at_barrier). Where
// the job's threads share CPUs among themselves (confined to fewer CPUs than its team, or more of
// its runtime's threads than it has CPUs: their slots) it lets its CPU go to a latecomer.
// Elsewhere each thread has a CPU of its own, and a yield can only hand it to another program's
// thread on the same core, for that one's time slice: under OMP_PROC_BIND beside NPB EP.W (both
// bound to both CPUs, EP unheld), NPB CG.W's thousands of barriers each waited out a slice of
// EP's, and CG.W took 0.96 s against 0.30 s natively. It spins there instead, as libomp's own
// barrier does (0.25 s).
inline void look_again_soon(State& s) noexcept {
    if (host().confined() || s.slots.used() > host().cpus()) {
        sched_yield();
        return;
    }
    for (int i = 0; i < 64; ++i) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#elif defined(__aarch64__)
        asm volatile("yield");
#endif
    }
}

// The calling thread's place in the order in which held threads go in (ThreadCounters::
// held_at_barrier): where the job's threads are bound, 1 + the rank of its CPU among those the
// table placed the job on (Host::cpu_rank: the CPU the job keeps at allotment 1 first, one not
// the job's last), else kHeld. Under OMP_PROC_BIND two jobs' threads 0 share CPU 0 (and their
// threads 1 CPU 1), and two jobs held to one working thread each left the other CPU idle where
// chance made both threads 0 the working ones (BOTS health + sort, gcc: a pair's repetitions took
// 0.4-0.9 s or 1.3-1.7 s, bench/results/2026-12-07-bind-pairs-gcc-dev2core). libgomp only: there
// a thread held out of its barrier is all that chooses who runs the queued tasks; libomp's threads
// are held between tasks too (wait_in_barrier).
inline std::uint8_t held_key(const State& s) noexcept {
    // (Any CPU's rank says whether they are known, without sched_getcpu: most jobs are not bound.)
    if (&s != &g_gomp_state || host().cpu_rank(0) < 0) return ThreadCounters::kHeld;
    const int cpu = sched_getcpu();
    const int rank = cpu < 0 ? -1 : host().cpu_rank(cpu);
    return rank < 0 ? ThreadCounters::kHeld : static_cast<std::uint8_t>(1 + std::min(rank, Host::kCpuUnplaced));
}

// teammates_now, and where the job's threads are bound (`ranked`: held_key), a libgomp team's
// threads that have not started their share yet (its first region makes them now:
// ThreadState::team_size) read as engaged in it: a first arrival of the first region saw no
// teammate, and took the root task that a teammate on the job's CPUs was to run. Only there: a
// thread without a slot would read as never started.
inline int unstarted_teammates(const ThreadState& t, const Teammates& m) noexcept {
    return std::max(t.team_size - 1 - m.count, 0);
}
inline Teammates team_now(State& s, const ThreadState& t, bool ranked) noexcept {
    Teammates m = teammates_now(s.slots, t.counters);
    if (const int missing = unstarted_teammates(t, m); ranked && missing > 0) {
        m.unstarted = missing;
        m.working += missing;
        m.engaged_count += missing;
        m.engaged = true;
    }
    return m;
}

// How many of the arrived threads run `queued` tasks in the barrier, where at most `limit` may work:
// ranked (held_key), no more than there are tasks, so that the best ranked take a lone root.
inline std::int64_t queue_runners(int limit, std::int64_t queued, std::uint8_t key) noexcept {
    return key == ThreadCounters::kHeld ? limit : std::min<std::int64_t>(limit, queued);
}

// A ranked arrival at a barrier (ranked_arrival) runs the queue where fewer than queue_runners are
// ahead of it: the threads in the barrier, the held ones ranked before it, and those still in their
// share of the region (they use the allotment, and the one making the tasks comes to run them).
inline bool among_queue_runners(const Teammates& m, int limit, std::int64_t queued, std::uint8_t key) noexcept {
    return m.in_barrier + m.held_before + m.engaged_count < queue_runners(limit, queued, key);
}

// at_barrier where the job's threads are bound (`key`: held_key): the threads on the job's best
// ranked CPUs run the queued tasks, as many as there are tasks and the allotment admits
// (queue_runners), and the others stay out (among_queue_runners). With nothing queued it goes in
// as at_barrier would, but a thread not on the job's first CPUs first looks for up to kTaskWaitNs
// for a task to appear: at a `single`'s barrier it arrives before the single's thread has made the root task,
// and took it (the job's best CPU then idle, and the root's thread on another job's; at its start
// a job alone ranks every CPU, and keeps its first one when it shrinks: gat/placement.hpp).
// Returns whether it is held; marked held (seen so by the others) either way while it decides.
inline bool ranked_arrival(State& s, ThreadState& t, int limit, std::uint8_t key) noexcept {
    t.counters->held_at_barrier.store(key, std::memory_order_seq_cst);
    bool hold = false;
    for (const std::uint64_t until = now_ns() + kTaskWaitNs;;) {
        const Teammates m = team_now(s, t, true);
        const std::int64_t queued = queued_in_team(s.slots, t.counters);
        if (queued >= 1) {
            hold = !among_queue_runners(m, limit, queued, key);
            if (hold) s.held_for_queue.store(true, std::memory_order_relaxed);
            break;
        }
        if (!m.engaged) break;  // all here, nothing queued: the barrier is a meeting point
        if (m.making_tasks) {   // as at_barrier: held while the allotment is at work
            hold = m.working >= limit;
            break;
        }
        if ((m.working < limit && key - 1 < limit - m.working) || now_ns() >= until) break;
        look_again_soon(s);
    }
    if (!hold) t.counters->held_at_barrier.store(0, std::memory_order_seq_cst);
    // Those now ahead go in, or (going in itself) the held wake to ask again.
    if (s.parked.load(std::memory_order_relaxed) > 0) s.lot.wake_all();
    return hold;
}

// At a barrier: a thread arriving there holds no task and no iteration, and nobody's user code can
// be waiting for it (whatever it had to do before the barrier is done). While as many other
// threads as the allotment admits are still working (engaged in their share of the region, or
// running tasks), it waits here instead of entering the barrier, where the runtime would have it
// steal their tasks: with a team wider than the allotment (OpenMP keeps the promised team, and
// confinement shares the allotment's CPUs among it), those steals made the threads take turns on
// one CPU, libomp yielding after every task (omp_pair's fib: 120 000 context switches in 0.3 s).
// Only its teammates' arrival at the barrier can need it, so it goes on when
//   - no teammate is engaged any more: the last one reached a barrier (and woke the lot; a poll
//     sees it too), or
//   - the other threads did no work at all for kIdleNs (they wait, possibly for us; less let
//     threads go whenever a loaded machine kept the working one off its CPU), or
//   - the allotment rises or is released (set_active/release wake the lot), or
//   - the others made no progress mark for kMaxParkNs (OthersStuck: busy, but perhaps on what only
//     a thread in the barrier would run), or kMaxBarrierHoldNs passed (a mistake costs time, never
//     a hang). Not at kMaxParkNs whatever they do, as before: a libgomp thread let into its barrier
//     runs the queued tasks for good (libgomp has no place between them where it could wait
//     again, as libomp's yield is: wait_in_barrier), and a tied fib's teammate, let in after a
//     second, ran the queued half of the tree beside its maker (omp.gcc.bind_tasks: 1.26 CPUs at
//     allotment 1 under OMP_PROC_BIND in a CI run, the other thread's task count 2.7 million of
//     4.4 in about half the runs; now none).
// As in park(), many parked threads poll less often each, and the first to find that no teammate
// is engaged, or that the others did no work, wakes the rest (a parked thread does none, so that
// holds for each of them): 998 threads of a 1000-thread task program (tests/omp/omp_work fib,
// 2 CPUs, natively 0.32 s) each polling every millisecond, each poll a look at every teammate,
// took it to 13.6 s under the shim alone (forty-first session).
// Outermost regions only (nested teams are the program's business). Called with the barrier's
// wait frame pushed.
inline void at_barrier(State& s, ThreadState& t) noexcept {
    // Sequentially consistent, as teammates_now's loads: of two threads arriving together, at
    // least one sees the other arrived. (ThreadSanitizer does not take a fence.)
    set_engaged(s, t, false);
    int limit = s.limit.load(std::memory_order_relaxed);
    if (limit == kNotStarted) {
        // The first region's threads reach their first barrier before the controller has the
        // first allotment (the join follows the first fork by about a millisecond); a program of
        // one long region would never be held to it. Once per process, from the first thread to
        // get here, every thread that does waits for it up to kFirstAllotmentNs after that first
        // one came (set_active wakes the lot). Every thread, not only the first: a thread in the
        // barrier runs the queued tasks, and those made before the allotment do not run at once
        // (gomp_hooks.cpp: run_at_once): BOTS uts and sort (gcc: an untied root task from a
        // `single nowait`, whose thread reaches the barrier at once) had the second thread take
        // half the tree there, at 1.6-1.9 CPUs at allotment 1 under OMP_PROC_BIND. A thread here
        // holds no task, and the barrier could not end before the first one's wait anyway.
        if (!s.seen.load(std::memory_order_relaxed)) return;
        std::uint64_t until = s.first_wait_until.load(std::memory_order_relaxed);
        if (until == 0) {
            const std::uint64_t mine = now_ns() + kFirstAllotmentNs;
            if (s.first_wait_until.compare_exchange_strong(until, mine, std::memory_order_relaxed)) until = mine;
        }
        if (now_ns() >= until) return;
        park_until(s.lot, s.parked, ParkBounds{kFirstAllotmentNs, 1000, kFirstAllotmentNs},
                   [&] { return s.limit.load(std::memory_order_relaxed) != kNotStarted || now_ns() >= until; });
        limit = s.limit.load(std::memory_order_relaxed);
    }
    if (limit <= 0) return;
    // Where the job's threads are bound, its placement decides who runs the queue (ranked_arrival).
    const std::uint8_t key = held_key(s);
    if (key != ThreadCounters::kHeld) {
        if (!ranked_arrival(s, t, limit, key)) return;
    } else if (Teammates m = teammates_now(s.slots, t.counters); !m.engaged) {
        // The last to arrive. The barrier needs the threads held here, but only once what is
        // queued has run: libgomp has every thread in its barrier take queued tasks, and where a
        // loop's iterations make the tasks (BOTS sparselu-for, alignment-for: every thread makes
        // some, and they meet at the loop's end) the held ones ran them beside it, at 1.25-1.29
        // CPUs at allotment 1 under OMP_PROC_BIND. While tasks remain queued, as many threads as
        // the allotment admits run them in the barrier and the rest stay out; the task that
        // empties the queue wakes those (tell_held_if_drained), and their polls see it too.
        // Arriving together, two threads may each see the other arrived (both go in: what the
        // queue rule then keeps is lost for that barrier) or, both held, pick by slot order
        // which one goes in (held_before).
        // One queued task at most (a `single nowait`'s root: BOTS health, sort, uts) is left to
        // libgomp as before: all go in, and the first woken takes it. Kept out, the held let the
        // last arrival (the single's thread, mostly thread 0) run it every time, and under
        // OMP_PROC_BIND two such jobs' threads 0 share CPU 0 (ranked_arrival now chooses there).
        if (queued_in_team(s.slots, t.counters) <= 1) {
            if (s.parked.load(std::memory_order_relaxed) > 0) s.lot.wake_all();
            return;
        }
        s.held_for_queue.store(true, std::memory_order_relaxed);
        if (m.in_barrier < limit) return;
    } else {
        if (m.working < limit) return;
        // Only where there are tasks to leave to them. Without tasks (static loops, NPB SP and
        // LU: a barrier every few microseconds) the barrier is just a meeting point, and a sleep
        // and a wake-up per barrier cost 2-3x; a thread that comes first looks for up to
        // kTaskWaitNs (letting its CPU go where confinement may share it with the latecomers:
        // look_again_soon), for the region's tasks to appear (the single's thread makes them
        // right after it starts) or the others to arrive, and otherwise enters the barrier as it
        // would without the shim.
        for (std::uint64_t until = now_ns() + kTaskWaitNs; !m.making_tasks;) {
            look_again_soon(s);
            m = teammates_now(s.slots, t.counters);
            if (!m.engaged || (!m.making_tasks && now_ns() >= until)) return;
        }
    }
    // Held: marked first (sequentially consistent, as the arrival above), so that threads
    // arriving together see each other held or in the barrier.
    t.counters->held_at_barrier.store(key, std::memory_order_seq_cst);
    OthersIdle idle(s, t.counters);
    OthersStuck stuck(s, t.counters);
    park_until(s.lot, s.parked, kBarrierHoldBounds, [&] {
        int l = s.limit.load(std::memory_order_relaxed);
        if (l <= 0 || l > limit) return true;
        const Teammates now = team_now(s, t, key != ThreadCounters::kHeld);
        bool needed_later = now.engaged;
        if (key != ThreadCounters::kHeld) {
            // Ranked (ranked_arrival): in while fewer than the queue's runners are ahead of it.
            if (const std::int64_t queued = queued_in_team(s.slots, t.counters); queued >= 1) {
                if (among_queue_runners(now, limit, queued, key)) return true;
                needed_later = true;
            }
        } else if (const std::int64_t lone = s.held_for_queue.load(std::memory_order_relaxed) ? 0 : 1;
                   !now.engaged && queued_in_team(s.slots, t.counters) > lone) {
            // (A lone queued task is the last arrival's to leave to libgomp, as above, unless it
            // is what remains of a queue the held already wait out: held_for_queue.)
            // Queued tasks, and every thread arrived: stay out while as many as the allotment
            // admits are in the barrier; of the held, the first ones in slot order make up the
            // rest, one by one (held_before), without waking the others.
            if (now.in_barrier + now.held_before < limit) return true;
            needed_later = true;
        }
        // The CPU rule: over a second or more, the job's threads used less CPU than the
        // allotment admits, by a third of a processor. Its working thread shares its CPU: under
        // OMP_PROC_BIND two jobs' threads 0 are bound to the same one, and where both jobs are
        // held to them the other CPU stays idle (bench/results/2026-12-07-bind-pairs-gcc-dev2core:
        // BOTS uts + health medium took 8.4-11.8 s in some runs, 4.2-7.1 s in others; the
        // eightieth session traced the two cases, docs/enforcement.md). One
        // held thread goes on, on its own CPU, per reading. (A third, not libomp's half: two
        // threads sharing a CPU use half of it each.) libgomp only: a libomp thread let in here
        // is held again between tasks, with a CPU escape of its own (wait_in_barrier). With this
        // rule for both, one CI run under ASan read 1.15+ CPUs at allotment 1 for libomp's tied
        // fib (omp.clang.bind_tasks: one region's tasks on both threads); not explained, and the
        // rule taken out of libomp's way.
        // (Not the idle rule while a teammate has yet to start: it waits for a CPU, not for us.)
        if (needed_later && (now.unstarted > 0 || !idle.for_idle_ns()) && !stuck.for_max_park_ns() &&
            !(&s == &g_gomp_state &&
              s.barrier_cpu.room_for_one(s.slots, now_ns(), kMaxParkNs, limit, kBarrierCpuMargin)))
            return false;
        if (s.parked.load(std::memory_order_relaxed) > 0) s.lot.wake_all();
        return true;
    });
    t.counters->held_at_barrier.store(0, std::memory_order_relaxed);
}

// libgomp: a wrapped task begins while threads are held at a barrier that all their teammates
// reached (at_barrier's last arrival). Where it was the last one queued, the barrier needs them.
inline void tell_held_if_drained(State& s, ThreadState& t) noexcept {
    if (!t.counters || queued_in_team(s.slots, t.counters) > 0) return;
    s.held_for_queue.store(false, std::memory_order_relaxed);
    s.lot.wake_all();
}

// libgomp, a taskwait of a thread's implicit task in an outermost region (BOTS fib, nqueens,
// floorplan: a `single` makes the tasks and waits for them, its teammates at the barrier). Where
// the job's threads are bound and better ranked teammates (held_key) are held at the barrier or
// in it, it leaves its queued tasks to them, as a barrier's last arrival does (at_barrier), and
// waits for them to be begun before it waits for them to end: libgomp's taskwait runs the
// waiting task's queued children itself, with nothing to hold it there. Safe: nobody waits for an
// implicit task (only a barrier, which needs this thread anyway), and its queued tasks go to a
// teammate in the barrier. Goes on as a held thread at a barrier does: the queue begun
// (tell_held_if_drained), the allotment up or released, the others idle or making no progress (a
// queued task that another spins for), or kMaxBarrierHoldNs. Only where no teammate is still in
// its share of the region.
inline void at_implicit_taskwait(State& s, ThreadState& t) noexcept {
    const int limit = s.limit.load(std::memory_order_relaxed);
    if (limit <= 0 || !t.counters) return;
    const std::uint8_t key = held_key(s);  // first: most jobs are not bound, and it says so at once
    if (key == ThreadCounters::kHeld) return;
    const std::int64_t queued = queued_in_team(s.slots, t.counters);
    if (queued < 1) return;
    Teammates m = teammates_now(s.slots, t.counters);
    // A teammate still in its share may be on its way to the barrier: a `single`'s teammates go
    // there as it begins, and fib's single waits within microseconds (its teammate arrived 15 us
    // later, and the single, not on the job's CPU, ran the first half of the tree itself: 1 in 25
    // runs of omp.gcc.bind_tasks, 5 in 130 on a loaded machine). Where its own CPU is not among
    // the job's first `limit`, it looks for up to kTaskWaitNs for them to arrive, as a first
    // arrival at a barrier looks for tasks (ranked_arrival); once per region where they stay.
    if (m.engaged && key > limit) {
        const void* team = t.counters->team.load(std::memory_order_relaxed);
        for (const std::uint64_t until = now_ns() + kTaskWaitNs; m.engaged && t.arrivals_waited != team;) {
            if (now_ns() >= until) t.arrivals_waited = team;
            look_again_soon(s);
            m = teammates_now(s.slots, t.counters);
        }
    }
    // Teammates not started yet (the first region makes them now: fib's single waits within
    // microseconds of its fork) go to the barrier when they start, there to run the queue.
    if (m.engaged || m.held + m.in_barrier + unstarted_teammates(t, m) == 0) return;
    // Ahead of it: those in the barrier, the held in a better place, and the teammates not started
    // where its own CPU is not among the job's first `limit`.
    const auto ahead = [&](const Teammates& now) {
        return now.in_barrier + now.held_before + (key > limit ? unstarted_teammates(t, now) : 0);
    };
    t.counters->held_at_barrier.store(key, std::memory_order_seq_cst);
    m = teammates_now(s.slots, t.counters);
    if (ahead(m) < queue_runners(limit, queued, key)) {  // among the best: runs them itself
        t.counters->held_at_barrier.store(0, std::memory_order_seq_cst);
        return;
    }
    set_engaged(s, t, false);
    s.held_for_queue.store(true, std::memory_order_relaxed);
    if (s.parked.load(std::memory_order_relaxed) > 0) s.lot.wake_all();  // those ahead go in now
    OthersIdle idle(s, t.counters);
    OthersStuck stuck(s, t.counters);
    park_until(s.lot, s.parked, kBarrierHoldBounds, [&] {
        const int l = s.limit.load(std::memory_order_relaxed);
        const std::int64_t q = queued_in_team(s.slots, t.counters);
        if (l <= 0 || l > limit || q < 1) return true;
        const Teammates now = teammates_now(s.slots, t.counters);
        return ahead(now) < queue_runners(limit, q, key) || (unstarted_teammates(t, now) == 0 && idle.for_idle_ns()) ||
               stuck.for_max_park_ns();
    });
    t.counters->held_at_barrier.store(0, std::memory_order_relaxed);
    set_engaged(s, t, true);
}

// The threads wait_in_barrier holds may be what their teammates wait for now: one of those found
// no task in the barrier while fewer than the allotment work, or left the barrier (the program
// may now wait for their arrival at the next barrier, their share of the next loop). They go on
// and look again. One load where none waits.
inline void tell_barrier_waiters(State& s) noexcept {
    if (s.parked_in_barrier.load(std::memory_order_seq_cst) == 0) return;
    s.barrier_news.fetch_add(1, std::memory_order_seq_cst);
    s.lot.wake_all();
}

// In a barrier, between two tasks or having found none (libomp only). Where parking is the only
// hold (the user binds threads, APSHIM_CONFINE=0), a task program's threads at its region's
// barrier ran tasks there for good once at_barrier let them in: BOTS uts (clang,
// OMP_PROC_BIND=true) used 1.98 CPUs at allotment 1, health 1.93-1.96, sort 1.76. A task's own
// hooks are no place to stop: at its start the thread holds it, and libomp reports its completion
// (ompt_task_complete) before it lowers the parent's count of unfinished children and releases
// its dependences, which a teammate's taskwait waits for. In its default "throughput" mode libomp
// then calls sched_yield before it looks for the next task (__kmp_execute_tasks:
// `KMP_YIELD(__kmp_library == library_throughput)`, once __kmp_invoke_task has finished the task),
// and in its barrier's spin loop (KMP_USE_YIELD=1), both through the PLT (kmp_yield.cpp); the shim
// keeps that mode where it cannot confine (omp_env.cpp). In the barrier, outside any explicit
// task, the thread holds no task, and only the barrier can need it: its teammates' passage waits
// for it to find the task queues empty (libomp's unfinished_threads) or, before that, to arrive.
// So, as at_barrier: while as many teammates as the allotment admits are working (engaged in
// their share of the region, or inside tasks, waiting there included), it waits, and it goes on when
//   - a teammate in the barrier found no task while fewer than the allotment work, or one left
//     the barrier (tell_barrier_waiters): it may be what they wait for, or
//   - the others did no work at all for kIdleNs (a thread asleep in the barrier yields no more), or
//   - the team used less CPU than the limit admits, by half a processor, over kIdleNs at least
//     (as park(), over a longer window): its tasks sleep (LLVM's tests: tasks of a second's sleep
//     each ran one at a time, 13 s against 23), and then it keeps a pass: it goes on from its
//     next yields while the team uses no more than its limit by half a processor (as oneTBB's
//     workers, adapters/tbb/task_hooks.cpp: keep_going; otherwise one task per reading of the
//     clocks). A thread let go here may take a task as large as half the program (the root's
//     other child), so half-millisecond readings, which a working teammate preempted for a
//     moment reads as sleeping, let an untied fib run at 1.24 CPUs (CI, under ASan), or
//   - the allotment rises or is released, or confinement comes into force, or
//   - kMaxWaits polls or kMaxParkNs passed.
// Threads that look at once may all go on (the next yield asks again), never all wait: each waits
// only on seeing `limit` others at work, and one in the barrier reads idle.
inline void wait_in_barrier(State& s, ThreadState& t, bool found_none) noexcept {
    int limit = s.limit.load(std::memory_order_relaxed);
    if (limit <= 0) return;
    // A teammate waiting inside a task spins on its CPU (libomp's taskwait never sleeps): at work,
    // as far as the allotment goes. Read as idle, a thread between two tasks went on beside one
    // (an untied fib at 1.12-1.26 CPUs in 3 of 6 runs).
    const Teammates m = teammates_now(s.slots, t.counters);
    // Only in a region that has tasks. In one without (loops only), the barrier is a meeting point
    // where libomp's own wait holds its threads (its blocktime, which the shim keeps short), and
    // parking them here as well had every look of a spinning teammate wake them all: a team of
    // 1000 with parking only, throttled, slept 354 000 times in this lot in 3 s (omp.clang.
    // many_threads: 4.6-6.3 CPU s against a bound of 4 on an AMD EPYC VM, eighty-first session).
    const bool tasks = m.tasks_made || t.counters->made_tasks.load(std::memory_order_relaxed) != 0;
    if (!tasks || m.working + m.waiting_in_tasks < limit) {
        if (found_none) tell_barrier_waiters(s);
        return;
    }
    if (t.cpu_pass && (t.cpu_pass = s.cpu_total.within(s.slots, now_ns(), kIdleNs, limit))) return;
    // Counted before the first look at barrier_news: news after that look sees the count (news
    // before it is in the look).
    s.parked_in_barrier.fetch_add(1, std::memory_order_seq_cst);
    const std::uint32_t news = s.barrier_news.load(std::memory_order_seq_cst);
    OthersIdle idle(s, t.counters);
    park_until(s.lot, s.parked, kSharedPollBounds, [&] {
        int l = s.limit.load(std::memory_order_relaxed);
        if (l <= 0 || l > limit || !host().parking_wanted() || s.barrier_news.load(std::memory_order_acquire) != news ||
            idle.for_idle_ns())
            return true;
        t.cpu_pass = s.cpu_total.room_for_one(s.slots, now_ns(), kIdleNs, limit);
        return t.cpu_pass;
    });
    s.parked_in_barrier.fetch_sub(1, std::memory_order_relaxed);
}

// A libomp thread in an outermost region calls sched_yield (kmp_yield.cpp). Only where parking is
// the only hold: where confinement can hold the job, the shim sets "turnaround", and no thread
// waits here. A task began or ended on it since its last yield: it is between two tasks; none
// did: it spins in a wait, having found none (or the program yields in its own code). In its
// barrier with no explicit task on it (libomp says so, and its frames are set to match:
// kmp_no_task_in_barrier), it may wait (wait_in_barrier).
// True where the yield is one between two tasks, which the caller then keeps from the kernel:
// "turnaround" without the yield, as where the shim confines (a system call per task, and BOTS
// health, millions of tiny untied tasks, took 3.7x its one-thread time at allotment 1 with it).
// The yields of spin loops go on to the kernel as libomp wants them.
inline bool yield_in_region(State& s, ThreadState& t) noexcept {
    if (!attached(s, t) || !s.timing.load(std::memory_order_relaxed) || host().confinement_possible() ||
        !host().parking_wanted())
        return false;
    // Not the marks: the part of an untied task that returns to the scheduler makes none.
    const bool between_tasks = t.task_events != t.task_events_at_yield;
    t.task_events_at_yield = t.task_events;
    if (!t.at_outer_barrier || t.level != 1) return between_tasks;
    // A look costs a pass over the slots, and threads spinning in a barrier yield every few
    // hundred rounds: each thread looks again only after kBarrierLookTicks per slot (at once in a
    // team of two, after about 100 us in one of 1000). With 1000 threads on 2 CPUs, a look at
    // every yield took a program of dynamic loops, throttled with parking only, from about 2.7 to
    // 4.0 CPU s (omp.clang.many_threads).
    const std::uint64_t now = now_ticks();
    if (now < t.next_barrier_look) return between_tasks;
    t.next_barrier_look = now + kBarrierLookTicks * static_cast<std::uint64_t>(s.slots.used());
    if (kmp_no_task_in_barrier(s, t)) wait_in_barrier(s, t, !between_tasks);
    return between_tasks;
}

// A chunk fetch returned "no more chunks": release every parked thread.
inline void loop_exhausted(State& s) noexcept {
    s.loops_exhausted.fetch_add(1, std::memory_order_release);
    if (s.parked.load(std::memory_order_relaxed) > 0) s.lot.wake_all();
}

// `t` begins another dispatched loop (libomp's __kmpc_dispatch_init_*): counted for
// teammate_ahead, and the parked are woken to ask it where a teammate is parked in an older loop
// (that one may hold what this loop's buffer waits for). Only then: with a team of 1000 on 2
// CPUs, each thread's loop start woke every parked thread, about half a million wake-ups a loop
// (fortieth session). One load when nobody is parked before a chunk.
inline void loop_started(State& s, ThreadState& t) noexcept {
    attach(s, t);
    if (!t.counters) return;
    t.counters->loops.store(t.counters->loops.load(std::memory_order_relaxed) + 1, std::memory_order_seq_cst);
    if (s.parked_before_chunks.load(std::memory_order_seq_cst) > 0 && teammate_parked_behind(s.slots, t.counters))
        s.lot.wake_all();
}

}  // namespace apshim::omp_adapter
