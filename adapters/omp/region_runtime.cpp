// Controller side of the OpenMP adapters, and the team-size rule.
#include "adapters/omp/region_runtime.hpp"

#include <algorithm>
#include <cstring>

namespace apshim::omp_adapter {

Sample RegionRuntime::sample() {
    Sample out;
    std::uint64_t now = now_ticks();
    double ns_per_tick = rate_.ns_per_tick();
    int n = state_.slots.used(), working = 0;
    std::uint64_t busy = 0;
    for (int i = 0; i < n; ++i) {
        ThreadCounters& c = state_.slots[i];
        std::uint64_t total = c.busy_ns.load(std::memory_order_relaxed);
        std::uint64_t since = c.busy_since.load(std::memory_order_relaxed);
        if (since && since < now) total += now - since;
        std::uint64_t delta = total >= prev_busy_[i] ? total - prev_busy_[i] : 0;
        prev_busy_[i] = total;
        busy += delta;
        if (delta > 0) ++working;
    }
    std::uint64_t events = state_.slots.total_events();
    out.used = events != prev_events_;
    prev_events_ = events;
    out.busy_ns = static_cast<std::uint64_t>(static_cast<double>(busy) * ns_per_tick);
    int limit = state_.limit.load();
    out.usage = std::max(1, limit > 0 ? std::min(working, limit) : working);
    return out;
}

void RegionRuntime::after_fork_child() {
    state_.slots.reset_after_fork();
    state_.fork_generation.fetch_add(1);
    state_.seen.store(false);
    state_.limit.store(0);
    std::memset(prev_busy_, 0, sizeof prev_busy_);
    prev_events_ = 0;
}

int team_size(State& s, int requested) noexcept {
    int limit = s.limit.load(std::memory_order_relaxed);
    if (limit <= 0) return requested;  // not throttling: the program's request, untouched
    int bound = requested > 0 ? requested : user_thread_setting();
    if (bound <= 0) bound = configured_processors() > 0 ? configured_processors() : limit;
    return std::min(bound, limit);
}

}  // namespace apshim::omp_adapter
