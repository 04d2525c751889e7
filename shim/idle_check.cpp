#include "shim/idle_check.hpp"

#include <algorithm>

namespace apshim {

const char* IdleCheck::name(Phase p) noexcept {
    switch (p) {
    case Phase::off: return "-";
    case Phase::with_idle: return "idle";
    case Phase::probe: return "probe";
    case Phase::declined: return "declined";
    }
    return "?";
}

void IdleCheck::start_with_idle(std::uint64_t now) noexcept {
    phase_ = Phase::with_idle;
    since_ = now;
    with_ = Window{};
}

bool IdleCheck::step(std::uint64_t now, std::uint64_t marks, bool active) noexcept {
    probe_ended_ = false;
    first_decline_now_ = false;
    if (!active) {
        // Nothing to decide (no idle processors, or the confinement check runs the job on all its
        // CPUs): the next window starts afresh. A hold keeps running on the wall clock.
        if (phase_ == Phase::declined && now - since_ < hold_ns_) return false;
        phase_ = Phase::off;
        return true;
    }
    switch (phase_) {
    case Phase::off:  // the cycle just ended ran under other conditions: not a sample
        probe_after_ = kFirstProbeNs;
        start_with_idle(now);
        return true;
    case Phase::with_idle:
        with_.marks += marks;
        with_.wall_ns = now - since_;
        if (with_.wall_ns < probe_after_ || with_.marks < kMinMarks) return true;
        phase_ = Phase::probe;
        since_ = now;
        without_ = Window{};
        return false;
    case Phase::probe:
        without_.marks += marks;
        without_.wall_ns = now - since_;
        if (without_.wall_ns < kProbeNs) return false;
        return decide(now);
    case Phase::declined:
        if (now - since_ < hold_ns_) return false;
        hold_ns_ = std::min(hold_ns_ * 2, kMaxHoldNs);
        probe_after_ = kFirstProbeNs;
        start_with_idle(now);
        return true;
    }
    return true;
}

bool IdleCheck::decide(std::uint64_t now) noexcept {
    probe_ended_ = true;
    // with_.wall_ns and without_.wall_ns > 0: both windows lasted at least one cycle.
    double with_rate = static_cast<double>(with_.marks) / static_cast<double>(with_.wall_ns);
    double without_rate = static_cast<double>(without_.marks) / static_cast<double>(without_.wall_ns);
    last_ratio_ = with_rate > 0 ? without_rate / with_rate : 0;
    if (without_.marks >= kMinMarks && last_ratio_ >= kDeclineRatio) {
        phase_ = Phase::declined;
        since_ = now;
        first_decline_now_ = !declined_before_;
        declined_before_ = true;
        return false;
    }
    probe_after_ = std::min(probe_after_ * kGrowth, kMaxIntervalNs);
    start_with_idle(now);
    return true;
}

}  // namespace apshim
