#include "shim/width_check.hpp"

#include <algorithm>

namespace apshim {

const char* WidthCheck::name(Phase p) noexcept {
    switch (p) {
    case Phase::off: return "-";
    case Phase::wide: return "wide";
    case Phase::probe: return "probe";
    case Phase::narrowed: return "narrowed";
    }
    return "?";
}

void WidthCheck::start_wide(std::uint64_t now, int width) noexcept {
    phase_ = Phase::wide;
    since_ = recent_since_ = now;
    width_ = width;
    wide_ = recent_ = recent_prev_ = Window{};
}

void WidthCheck::add_wide(std::uint64_t now, std::uint64_t marks) noexcept {
    wide_.marks += marks;
    wide_.wall_ns = now - since_;
    recent_.marks += marks;
    recent_.wall_ns = now - recent_since_;
    if (recent_.wall_ns >= kRecentNs) {
        recent_prev_ = recent_;
        recent_ = Window{};
        recent_since_ = now;
    }
}

int WidthCheck::step(std::uint64_t now, std::uint64_t marks, int width, bool active) noexcept {
    decided_ = false;
    first_narrowing_now_ = false;
    if (phase_ == Phase::narrowed) {
        // The hold runs on the wall clock, whatever the job does meanwhile.
        if (now - since_ < hold_ns_) return std::min(width, narrow_);
        probe_after_ = kFirstProbeNs;
        phase_ = Phase::off;
    }
    active = active && width >= 2;
    if (!active || (phase_ != Phase::off && width != width_)) {
        // Nothing to judge, or DP changed the job's processors: whatever was measured was measured
        // at another width, and the next window starts afresh (after the interval reached so far).
        phase_ = Phase::off;
        if (!active) return width;
    }
    std::uint64_t elapsed = now - since_;
    switch (phase_) {
    case Phase::off:  // the cycle just ended ran under other conditions: not a sample
        start_wide(now, width);
        return width;
    case Phase::wide: {
        add_wide(now, marks);
        // The reference: the window's recent part (its whole while shorter than kRecentNs).
        ref_ = recent_prev_.wall_ns ? Window{recent_prev_.marks + recent_.marks, recent_prev_.wall_ns + recent_.wall_ns}
                                    : wide_;
        // A reference too sparse for a probe to gather kMinMarks at the same rate in kMaxProbeNs
        // waits for more.
        bool enough = ref_.marks >= kMinMarks && ref_.rate() * static_cast<double>(kMaxProbeNs) >= kMinMarks;
        if (elapsed < probe_after_ || !enough) return width;
        phase_ = Phase::probe;
        since_ = now;
        narrow_ = width / 2;
        probe_ = Window{};
        return narrow_;
    }
    case Phase::probe:
        if (elapsed <= kSettleNs) return narrow_;  // the cycles just after the switch: not counted
        probe_.marks += marks;
        probe_.wall_ns = elapsed - kSettleNs;
        if (elapsed < kMinProbeNs) return narrow_;
        if (probe_.rate() < ref_.rate()) return decide(now, false);  // it needs its processors
        if (elapsed < kDecideNs || probe_.marks < kMinMarks) return elapsed < kMaxProbeNs ? narrow_ : decide(now, false);
        return decide(now, probe_.rate() >= kRatio * ref_.rate());
    case Phase::narrowed: break;  // handled above
    }
    return width;
}

int WidthCheck::decide(std::uint64_t now, bool narrower_faster) noexcept {
    decided_ = true;
    last_ratio_ = probe_.rate() / ref_.rate();  // ref_ has kMinMarks over a positive wall time
    if (narrower_faster) {
        // A hold right after a hold: twice as long as the one before.
        if (held_last_) hold_ns_ = std::min(hold_ns_ * 2, kMaxHoldNs);
        phase_ = Phase::narrowed;
        since_ = now;
        first_narrowing_now_ = !narrowed_before_;
        narrowed_before_ = held_last_ = true;
        return narrow_;
    }
    hold_ns_ = kFirstHoldNs;
    held_last_ = false;
    probe_after_ = std::min(probe_after_ * kGrowth, kMaxIntervalNs);
    start_wide(now, width_);
    return width_;
}

}  // namespace apshim
