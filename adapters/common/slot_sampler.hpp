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

class SlotSampler {
public:
    // busy: ticks spent in user work since the previous call, in ns; usage: threads that did
    // any work in the cycle, at most `limit` (when throttling), at least one (the main thread).
    template <int N>
    Sample sample(ThreadSlots<N>& slots, int limit) noexcept {
        Sample out;
        std::uint64_t now = now_ticks();
        double ns_per_tick = rate_.ns_per_tick();
        int n = std::min(slots.used(), kSlots), working = 0;
        std::uint64_t busy = 0;
        for (int i = 0; i < n; ++i) {
            std::uint64_t total = busy_until(slots[i], now);  // an interval still open included
            std::uint64_t delta = total >= prev_busy_[i] ? total - prev_busy_[i] : 0;
            prev_busy_[i] = total;
            busy += delta;
            if (delta > 0) ++working;
        }
        if (slots.overflowed())
            APSHIM_HOST_LOG_ONCE(Host::Severity::warn, "more than %d threads at once used a parallel runtime: the others are not measured", N);
        std::uint64_t events = slots.total_events();
        out.used = events != prev_events_;
        prev_events_ = events;
        out.busy_ns = static_cast<std::uint64_t>(static_cast<double>(busy) * ns_per_tick);
        out.usage = std::max(1, limit > 0 ? std::min(working, limit) : working);
        return out;
    }

    // After fork: the slots were reset, so are the previous totals.
    void reset() noexcept {
        std::memset(prev_busy_, 0, sizeof prev_busy_);
        prev_events_ = 0;
    }

private:
    static constexpr int kSlots = 1024;
    std::uint64_t prev_busy_[kSlots] = {};
    std::uint64_t prev_events_ = 0;
    TickRate rate_;
};

}  // namespace apshim
