// Controller side of per-thread counters: turns the running totals that hooks keep in
// ThreadSlots (TSC ticks) into one est_cycle's Sample. Shared by every adapter.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "adapters/adapter.hpp"
#include "adapters/common/busy.hpp"
#include "adapters/common/clock.hpp"
#include "adapters/common/thread_slots.hpp"

namespace apshim {

// CPU clocks cannot show more work than the job has CPUs: with APSHIM_P above them (threads
// sharing CPUs by design), only timed hooks measure the work of P threads.
inline bool cpu_clocks_fall_short() noexcept { return host().processors() > host().cpus(); }
// The same for a runtime that has had `threads` threads at most: while they fit the CPUs their
// clocks measure them as on any machine (BOTS fib without a cut-off, gcc, at APSHIM_P=8 on 2 CPUs:
// its team of 2 timed task by task took 0.3 s, 0.03 s with one thread).
inline bool cpu_clocks_fall_short(int threads) noexcept { return cpu_clocks_fall_short() && threads > host().cpus(); }

class SlotSampler {
public:
    // busy: user work since the previous call, in ns; usage: threads that did any work in the
    // cycle, at most `limit` (when throttling), at least one (the main thread). `timed`: the
    // hooks timed every task throughout the cycle (busy.hpp), so their intervals are the
    // measure; otherwise a runtime thread's CPU clock is, and an external thread's intervals
    // around its outermost entries (both kept in every cycle, so either is there to use).
    template <int N>
    Sample sample(ThreadSlots<N>& slots, int limit, bool timed = true) noexcept {
        Sample out;
        std::uint64_t now = now_ticks();
        double ns_per_tick = rate_.ns_per_tick();
        int n = std::min(slots.used(), kSlots), working = 0;
        double busy = 0;
        for (int i = 0; i < n; ++i) {
            ThreadCounters& c = slots[i];
            std::uint64_t total = busy_until(c, now);  // an interval still open included
            std::uint64_t delta = total >= prev_busy_[i] ? total - prev_busy_[i] : 0;
            prev_busy_[i] = total;
            std::uint64_t outer = outer_until(c, now);
            std::uint64_t outer_delta = outer >= prev_outer_[i] ? outer - prev_outer_[i] : 0;
            prev_outer_[i] = outer;
            slots.take_back_if_ended(c, prev_cpu_[i]);  // claimed for a thread that ended before adopting it
            bool clock_read = false;
            std::uint64_t cpu_delta = cpu_since_last(c, i, clock_read);
            double slot_ns = static_cast<double>(delta) * ns_per_tick;
            if (timed && clock_read && c.engaged.load(std::memory_order_relaxed) &&
                c.busy_since.load(std::memory_order_relaxed) == 0) {
                // In its share of an OpenMP region with no interval open: the share began before
                // timing came on, and one long region of static loops calls no hook that would
                // open one (NPB EP throttled read busy 0 and desire 1 in most runs, both threads
                // computing). Its CPU clock says what it did.
                slot_ns = std::max(slot_ns, static_cast<double>(cpu_delta));
            } else if (!timed) {
                slot_ns = static_cast<double>(cpu_delta);
                // An external thread: its time inside the runtime, but no more than the CPU it got
                // (its clock also counts its own serial code, which the outer interval leaves out).
                // Confined with more threads than CPUs it is switched out part of that time, and
                // blocked in a wait it uses none: counting its wall time there read 1.5 busy
                // processors on one CPU, and 10.5 on two with many threads waiting in TBB.
                if (c.external.load(std::memory_order_relaxed)) {
                    double outer_ns = static_cast<double>(outer_delta) * ns_per_tick;
                    slot_ns = clock_read ? std::min(outer_ns, slot_ns) : outer_ns;
                }
            }
            busy += slot_ns;
            if (slot_ns > 0) ++working;
        }
        if (slots.overflowed())
            APSHIM_HOST_LOG_ONCE(Host::Severity::warn, "more than %d threads at once used a parallel runtime: the others are not measured", N);
        std::uint64_t events = slots.total_events();
        // Untimed hooks count no events: any work measured says the runtime was used.
        out.used = events != prev_events_ || (!timed && busy > 0);
        prev_events_ = events;
        std::uint64_t marks = slots.total_marks();
        out.marks = marks >= prev_marks_ ? marks - prev_marks_ : 0;
        prev_marks_ = marks;
        std::uint64_t ends = slots.total_region_ends();
        out.region_ends = ends >= prev_ends_ ? ends - prev_ends_ : 0;
        prev_ends_ = ends;
        out.busy_ns = static_cast<std::uint64_t>(busy);
        out.measure = timed ? Sample::Measure::timed : Sample::Measure::clocks;
        out.usage = std::max(1, limit > 0 ? std::min(working, limit) : working);
        return out;
    }

    // After fork: the slots were reset, so are the previous totals.
    void reset() noexcept {
        std::memset(prev_busy_, 0, sizeof prev_busy_);
        std::memset(prev_cpu_, 0, sizeof prev_cpu_);
        std::memset(prev_outer_, 0, sizeof prev_outer_);
        prev_events_ = 0;
        prev_marks_ = 0;
        prev_ends_ = 0;
    }

private:
    // CPU time slot i's owners used since the previous call: the live owner's clock plus what
    // exited owners left (thread_slots.hpp). Never negative: a total that reads lower for a
    // moment (an owner between its exit and its slot's update) counts nothing until it is past.
    // `clock_read`: the live owner's clock could be read (no owner, or its thread just ended: not).
    std::uint64_t cpu_since_last(const ThreadCounters& c, int i, bool& clock_read) noexcept {
        std::uint64_t live = 0;
        clock_read = read_owner_cpu(c, live);
        std::uint64_t total = c.exited_cpu_ns.load(std::memory_order_acquire) + live;
        if (total <= prev_cpu_[i]) return 0;
        std::uint64_t delta = total - prev_cpu_[i];
        prev_cpu_[i] = total;
        return delta;
    }

    static constexpr int kSlots = 1024;
    std::uint64_t prev_busy_[kSlots] = {};
    std::uint64_t prev_cpu_[kSlots] = {};
    std::uint64_t prev_outer_[kSlots] = {};
    std::uint64_t prev_events_ = 0;
    std::uint64_t prev_marks_ = 0;
    std::uint64_t prev_ends_ = 0;
    TickRate rate_;
};

}  // namespace apshim
