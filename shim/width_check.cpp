#include "shim/width_check.hpp"

#include <algorithm>

namespace apshim {

namespace {
// The first `n` processors of `set` in index order, or the last `n`.
gat::ProcSet end_procs(const gat::ProcSet& set, int n, bool last) noexcept {
    gat::ProcSet out;
    for (int k = 0; k < gat::kMaxProcessors && n > 0; ++k) {
        const int i = last ? gat::kMaxProcessors - 1 - k : k;
        if (set[i]) {
            out.set(i);
            --n;
        }
    }
    return out;
}
}  // namespace

gat::ProcSet width_half(const gat::ProcSet& own, const gat::ProcSet& running, int w, bool other) noexcept {
    const gat::ProcSet mine = own & running;
    const gat::ProcSet first = end_procs(mine, w, false) | end_procs(running & ~own, w - mine.count(), false);
    return other ? end_procs(running & ~first, w, /*last=*/true) : first;
}

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
    since_ = now;
    width_ = width;
    wide_.restart(now);
}

void WidthCheck::start_probe(std::uint64_t now) noexcept {
    phase_ = Phase::probe;
    since_ = now;
    probe_ = Progress{};
    probe_peak_ = 0;
    probe_worked_ = false;
}

int WidthCheck::step(std::uint64_t now, std::uint64_t ends, int width, bool active, std::uint64_t marks,
                     bool counted, bool parallel, bool working) noexcept {
    decided_ = voided_ = false;
    compared_now_ = false;
    first_narrowing_now_ = false;
    if (phase_ == Phase::narrowed) {
        // The hold runs on the wall clock, whatever the job does meanwhile.
        if (now - since_ < hold_.ns()) return std::min(width, narrow_);
        probe_after_.reset();
        phase_ = Phase::off;
        reference_from_ = now + kWideSettleNs;
    }
    active = active && width >= 2;
    if (!active || (phase_ != Phase::off && width != width_)) {
        // Nothing to judge, or DP changed the job's processors: whatever was measured was measured
        // at another width, and the next window starts afresh (after the interval reached so far;
        // a first reading of "faster on fewer" was made at another width too).
        phase_ = Phase::off;
        second_look_ = false;
        if (comparing_) last_half_ = !last_half_;  // back to the half that gained, for the next probe
        comparing_ = false;
        if (!active) return width;
    }
    std::uint64_t elapsed = now - since_;
    switch (phase_) {
    case Phase::off:  // the cycle just ended ran under other conditions: not a sample
        start_wide(now, width);
        return width;
    case Phase::wide: {
        if (now <= reference_from_) {  // just after a probe or a hold: no reference
            wide_.restart(now);
            return width;
        }
        wide_.add(now, ends, marks, counted, parallel);
        // The reference: the window's recent part (its whole while shorter than kRecentNs).
        ref_ = wide_.recent();
        // A reference too sparse for a probe to gather kMinMarks at the same rate in kMaxProbeNs
        // waits for more, and so does one too short to be the phase the probe meets.
        bool enough = ref_.marks >= kMinMarks && ref_.per_wall() * static_cast<double>(kMaxProbeNs) >= kMinMarks &&
                      ref_.wall_ns >= kMinReferenceNs;
        if (elapsed < (second_look_ ? kSecondLookNs : probe_after_.ns()) || !enough) return width;
        narrow_ = width / 2;
        start_probe(now);
        return narrow_;
    }
    case Phase::probe:
        if (elapsed <= kSettleNs) return narrow_;  // the cycles just after the switch: not counted
        {
            const std::uint64_t counted_marks = wide_.probe_marks(ends, marks);
            probe_.marks += counted_marks;
            probe_peak_ = std::max(probe_peak_, counted_marks);
            probe_worked_ = probe_worked_ || working;
        }
        probe_.wall_ns = elapsed - kSettleNs;
        if (elapsed < kMinProbeNs) return narrow_;
        if (probe_.per_wall() < ref_.per_wall()) {
            // Not one mark, or all but a burst's: the job met a stretch without marks (a long
            // region), no reading of its width; once in a row, and not in the comparison of the
            // halves (kMaxVoidProbes).
            const bool no_reading = (probe_.marks == 0 || burst()) && probe_worked_;
            if (no_reading && !comparing_ && void_probes_ < kMaxVoidProbes) return void_probe(now);
            return decide(now, false);  // it needs its processors
        }
        if (elapsed < kDecideNs || probe_.marks < kMinMarks) return elapsed < kMaxProbeNs ? narrow_ : decide(now, false);
        return decide(now, probe_.per_wall() >= kRatio * ref_.per_wall() && !burst());
    case Phase::narrowed: break;  // handled above
    }
    return width;
}

int WidthCheck::void_probe(std::uint64_t now) noexcept {
    // Over, as a decision is (the controller spreads the job's threads again), but nothing follows
    // from it: the interval, the half and a pending second look stay as they were, and the next
    // probe comes after the same wide window, once its reference is enough again.
    decided_ = voided_ = true;
    ++void_probes_;
    last_ratio_ = last_peak_share_ = 0;
    reference_from_ = now + kWideSettleNs;
    start_wide(now, width_);
    return width_;
}

int WidthCheck::decide(std::uint64_t now, bool narrower_faster) noexcept {
    decided_ = true;
    void_probes_ = 0;
    reference_from_ = now + kWideSettleNs;  // what follows the probe on all processors
    last_ratio_ = probe_.per_wall() / ref_.per_wall();  // ref_ has kMinMarks over a positive wall time
    last_peak_share_ = probe_.marks ? static_cast<double>(probe_peak_) / static_cast<double>(probe_.marks) : 0.0;
    if (comparing_) {
        // The other half after a confirmed gain: hold on the half that got further.
        comparing_ = false;
        compared_now_ = true;
        other_ratio_ = last_ratio_;
        if (!(other_ratio_ > half_ratio_)) {
            last_half_ = !last_half_;
            last_ratio_ = half_ratio_;
        }
        return hold(now);
    }
    if (narrower_faster && !held_last_ && !second_look_) {
        // A first reading: believed once the probe after a second wide window reads the same.
        second_look_ = true;
        start_wide(now, width_);
        return width_;
    }
    second_look_ = false;
    if (narrower_faster && !held_last_ && !other_half_found_nothing_) {
        // A gain confirmed on one half, the other not measured since: probe that one too, from
        // the narrowed run at once (load no table sees may keep to the half that gained: a job
        // beside a hog pinned there, at its priority, gets on its CPU more than a convoy wide).
        comparing_ = true;
        half_ratio_ = last_ratio_;
        last_half_ = !last_half_;
        start_probe(now);
        return narrow_;
    }
    if (narrower_faster) return hold(now);
    hold_.reset();
    held_last_ = false;
    last_half_ = !last_half_;  // found nothing here: the other half next time
    other_half_found_nothing_ = true;
    probe_after_.grow();
    start_wide(now, width_);
    return width_;
}

int WidthCheck::hold(std::uint64_t now) noexcept {
    // A hold right after a hold: twice as long as the one before.
    if (held_last_) hold_.grow();
    phase_ = Phase::narrowed;
    since_ = now;
    first_narrowing_now_ = !narrowed_before_;
    narrowed_before_ = held_last_ = true;
    other_half_found_nothing_ = false;
    return narrow_;
}

}  // namespace apshim
