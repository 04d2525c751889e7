#include "shim/idle_check.hpp"

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
    with_.restart(now);
}

bool IdleCheck::step(std::uint64_t now, std::uint64_t ends, bool active, std::uint64_t marks, bool counted,
                     bool parallel) noexcept {
    probe_ended_ = false;
    first_decline_now_ = false;
    if (!active) {
        // Nothing to decide (no idle processors, or the confinement check runs the job on all its
        // CPUs): the next window starts afresh. A hold keeps running on the wall clock.
        if (phase_ == Phase::declined && now - since_ < hold_.ns()) return false;
        phase_ = Phase::off;
        return true;
    }
    switch (phase_) {
    case Phase::off:  // the cycle just ended ran under other conditions: not a sample
        probe_after_.reset();
        start_with_idle(now);
        return true;
    case Phase::with_idle:
        with_.add(now, ends, marks, counted, parallel);
        if (now - since_ < probe_after_.ns() || with_.recent().marks < kMinMarks ||
            with_.recent().wall_ns < kMinReferenceNs)
            return true;
        phase_ = Phase::probe;
        since_ = now;
        without_ = Progress{};
        return false;
    case Phase::probe:
        without_.marks += with_.probe_marks(ends, marks);
        without_.wall_ns = now - since_;
        if (without_.wall_ns < kProbeNs) return false;
        return decide(now);
    case Phase::declined:
        if (now - since_ < hold_.ns()) return false;
        hold_.grow();
        probe_after_.reset();
        start_with_idle(now);
        return true;
    }
    return true;
}

bool IdleCheck::decide(std::uint64_t now) noexcept {
    probe_ended_ = true;
    // The probe against the phase it follows at once: the window's recent part.
    double with_rate = with_.recent().per_wall();
    last_ratio_ = with_rate > 0 ? without_.per_wall() / with_rate : 0;
    if (without_.marks >= kMinMarks && last_ratio_ >= kDeclineRatio) {
        phase_ = Phase::declined;
        since_ = now;
        first_decline_now_ = !declined_before_;
        declined_before_ = true;
        return false;
    }
    probe_after_.grow();
    start_with_idle(now);
    return true;
}

}  // namespace apshim
