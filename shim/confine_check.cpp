#include "shim/confine_check.hpp"

#include <algorithm>

namespace apshim {

const char* ConfineCheck::name(Phase p) noexcept {
    switch (p) {
    case Phase::idle: return "-";
    case Phase::start: return "start";
    case Phase::confined: return "confined";
    case Phase::probe: return "probe";
    case Phase::confirm: return "confirm";
    case Phase::hold: return "handover";
    }
    return "?";
}

void ConfineCheck::enter_start(std::uint64_t now) noexcept {
    started_ = true;
    phase_ = Phase::start;
    since_ = now;
    construct_since_ = 0;
    construct_skip_cpu_ns_ = 0;
    probe_ = Progress{};
}

bool ConfineCheck::bound_spent(std::uint64_t now, std::uint64_t window_cpu_ns) const noexcept {
    if (!bounded_) return false;
    if (phase_ == Phase::start) return beyond(window_cpu_ns, 1, now - since_) >= kStartNs;
    if (phase_ != Phase::probe) return false;
    // A stalled job's probe: kStalledNs without a mark before it began (last_mark_ stays as
    // the window left it) may go on for longer.
    bool after_stall = since_ - last_mark_ >= kStalledNs;
    return beyond(window_cpu_ns, cpus_, now - since_) >= (after_stall ? kMaxProbeNs : kProbeNs);
}

bool ConfineCheck::sparse_stretch(std::uint64_t now, const Progress& stretch_progress) const noexcept {
    if (construct_since_ == 0 || now <= construct_since_) return false;
    std::uint64_t stretch = now - construct_since_;
    std::uint64_t surplus = beyond(stretch_progress.cpu_ns, 1, stretch);
    return stretch_progress.marks * kSparseMarkCpuNs < stretch_progress.cpu_ns &&
           (stretch_progress.marks > 0 ? stretch >= kSparseStartNs || surplus >= kSparseStartNs
                                       : surplus >= kQuietStartSurplusNs);
}

void ConfineCheck::peek_construct(std::uint64_t now, std::uint64_t cpu_ns, bool in_construct) noexcept {
    if (phase_ != Phase::start || !in_construct || construct_since_ != 0) return;
    construct_since_ = now;
    construct_ = Progress{};
    construct_skip_cpu_ns_ = cpu_ns;
}

bool ConfineCheck::window_spent(std::uint64_t now, std::uint64_t cpu_ns) const noexcept {
    if (!window_bounded()) return false;
    if (phase_ == Phase::confirm) return beyond(cpu_ns, cpus_, now - since_) >= confirm_cycle_bound();
    if (bound_spent(now, probe_.cpu_ns + cpu_ns)) return true;
    // The start's stretch of construct while no step has counted a mark in it, as its step would
    // read it if the cycle made none: the step then ends the start, or, where the cycle's marks
    // were dense after all, goes on (once a stretch: its marks are counted from then on, and the
    // sparse rule with marks is read at the steps).
    if (phase_ != Phase::start || construct_.marks > 0) return false;
    Progress stretch = construct_;
    stretch.cpu_ns += cpu_ns - std::min(cpu_ns, construct_skip_cpu_ns_);
    return sparse_stretch(now, stretch);
}

void ConfineCheck::start_confined(std::uint64_t now) noexcept {
    phase_ = Phase::confined;
    since_ = now;
    ref_since_ = now;
    last_mark_ = now;
    ref_ = Progress{};
    cpus_ = 0;
    recent_.restart(now);
}

void ConfineCheck::choose_reference(std::uint64_t now) noexcept {
    // The window's recent part, when it holds marks enough to judge by (RecentProgress says why).
    // A job too sparse in marks for it (a hand-over-bound one that marks once in tens of ms) is
    // judged by the whole window.
    Progress recent = recent_.recent();
    if (recent.marks >= kMinProbeMarks && recent.cpu_ns > 0) {
        compared_ref_ = recent;
    } else {
        compared_ref_ = ref_;
        compared_ref_.wall_ns = now - ref_since_;
    }
}

bool ConfineCheck::step(std::uint64_t now, std::uint64_t marks, std::uint64_t cpu_ns, int cpus, bool confinable,
                        bool markable, bool in_construct) noexcept {
    first_hold_now_ = false;
    probe_ended_ = false;
    if (marks > 0 && phase_ != Phase::idle) marked_ = true;
    if (!confinable) {  // nothing to confine: the next confinement starts a fresh window
        phase_ = Phase::idle;
        probe_after_.reset();
        start_pending_ = false;
        looks_ = 0;
        return true;
    }
    switch (phase_) {
    case Phase::idle:  // the cycle just ended ran unconfined: not a confined sample
        if (!started_ && markable) {
            enter_start(now);
            return false;
        }
        start_confined(now);
        return true;
    case Phase::start: {
        probe_.marks += marks;
        probe_.cpu_ns += cpu_ns;
        // A stretch of construct whose marks are too sparse for a hand-over-bound job ends the
        // start (kSparseStartNs, the header). Its first cycle may have begun in serial code, so
        // the stretch begins at its first cycle end, or at the peek that saw it (peek_construct),
        // whose cycle's CPU before it is left out.
        if (!in_construct) {
            construct_since_ = 0;
        } else if (construct_since_ == 0) {
            construct_since_ = now;
            construct_ = Progress{};
        } else {
            construct_.marks += marks;
            construct_.cpu_ns += cpu_ns - std::min(cpu_ns, construct_skip_cpu_ns_);
        }
        construct_skip_cpu_ns_ = 0;
        bool sparse = sparse_stretch(now, construct_);
        if (now - since_ < kStartNs && !sparse && !bound_spent(now, probe_.cpu_ns)) return false;
        start_confined(now);
        start_pending_ = true;
        return true;
    }
    case Phase::confined: {
        if (ref_.marks == 0 && ref_.cpu_ns == 0 && marks == 0 && !in_construct) {
            // The window begins at its first mark, or in a parallel construct. CPU time before
            // went to serial code (set-up, a serial phase), which a probe of the marking phase
            // after it would be compared against: cdo's 1.4 s of serial set-up, then ~40,000
            // regions a second, read 200x faster unconfined at the first cycle of regions, and
            // the job was held unconfined for a second (tests/real/RESULTS.md, twenty-fifth
            // session). CPU time in a construct is a reference, marks or not: without them it may
            // be a hand-over stalled by confinement (below).
            ref_since_ = now;
            recent_.restart(now);
            return true;
        }
        ref_.marks += marks;
        ref_.cpu_ns += cpu_ns;
        recent_.add(now, marks, cpu_ns);
        if (marks > 0) last_mark_ = now;
        cpus_ = std::max(cpus_, cpus);
        std::uint64_t window = now - ref_since_, confined_for = now - since_;
        // A job with no progress marks while confined (one long region, CPU clocks measuring) has
        // nothing to compare: it is never probed. One that has made marks before and makes none
        // in a construct now is probed on time (confine_check.hpp, the timing of probes).
        bool stalled = ref_.marks == 0 && marked_;
        bool enough = ref_.marks >= kMinRefMarks || (ref_.marks > 0 && window >= kMaxRefNs) || stalled;
        if (!enough || ref_.cpu_ns == 0) return true;
        if (start_pending_ && window >= kFirstCompareNs && confined_for < probe_after_.ns()) {
            // The start was the probe; one too short to prove anything (serial set-up) leaves the
            // window to grow to the first real probe. Past that, a probe is fresher.
            start_pending_ = false;
            if (probe_.marks >= kMinProbeMarks) {
                choose_reference(now);
                return decide(now, /*after_probe=*/false);
            }
        }
        if (window < (looks_ > 0 ? look_ns_ : probe_after_.ns())) return true;
        choose_reference(now);
        start_pending_ = false;
        phase_ = Phase::probe;
        since_ = now;
        probe_ = Progress{};
        return false;
    }
    case Phase::probe: {
        probe_.marks += marks;
        probe_.cpu_ns += cpu_ns;
        if (bound_spent(now, probe_.cpu_ns)) return decide(now, /*after_probe=*/true);
        // A stalled job's probe: kStalledNs without a mark before it began (last_mark_ stays as
        // the window left it).
        bool after_stall = since_ - last_mark_ >= kStalledNs;
        // What the probe took from the co-runners so far (the early end below counts it).
        std::uint64_t spent = beyond(probe_.cpu_ns, cpus_, now - since_);
        if (now - since_ < kProbeNs) {
            // One that reads far from hand-over bound, on marks and CPU enough, ends once it has
            // cost a probe on two CPUs (confine_check.hpp: the same at any width).
            bool plain = !after_stall && probe_.marks >= kMinProbeMarks && spent >= kProbeNs &&
                         ratio(probe_, compared_ref_) <= kRatio / 2;
            if (!plain) return false;
        } else if (probe_.marks < kMinProbeMarks && after_stall && now - since_ < kMaxProbeNs) {
            return false;  // too few marks to judge yet: goes on (confine_check.hpp)
        }
        return decide(now, /*after_probe=*/true);
    }
    case Phase::confirm: {
        // The cycle just ended ran as confirm_unconfined said.
        int kind = confirm_unconfined(confirm_cycle_);
        Progress& pool = confirm_[kind];
        pool.marks += marks;
        pool.cpu_ns += cpu_ns;
        pool.wall_ns += now - since_;
        if (marks > confirm_top_[kind].marks) confirm_top_[kind] = Progress{marks, cpu_ns, now - since_};
        if (kind == 1) {
            confirm_beyond_ += beyond(cpu_ns, cpus_, now - since_);
            confirm_marked_cycles_ += marks > 0;
        }
        since_ = now;
        if (++confirm_cycle_ == kConfirmCycles) return decide_confirmed(now);
        if (bounded_ && confirm_cycle_ >= kMinBoundedConfirmCycles && !confirm_unconfined(confirm_cycle_)) {
            // Each kind has had as many cycles: the unconfined ones' surplus against what
            // kConfirmCycles / 2 of them use at allotment 1 of 2 CPUs (a cycle's length each; the
            // unconfined ones may have ended early, window_spent).
            if (confirm_beyond_ >= static_cast<std::uint64_t>(kConfirmCycles / 2) * confirm_cycle_ns())
                return decide_confirmed(now);
        }
        return !confirm_unconfined(confirm_cycle_);
    }
    case Phase::hold:
        if (now - since_ < hold_.ns()) return false;
        hold_.grow();
        probe_after_.reset();
        start_confined(now);
        return true;
    }
    return true;
}

std::uint64_t ConfineCheck::beyond(std::uint64_t cpu_ns, int cpus, std::uint64_t wall_ns) noexcept {
    std::uint64_t own = static_cast<std::uint64_t>(std::max(cpus, 1)) * wall_ns;
    return cpu_ns > own ? cpu_ns - own : 0;
}

double ConfineCheck::ratio(const Progress& unconfined, const Progress& confined) noexcept {
    // Per CPU-second, unconfined against confined. A confined window without a mark reads as one
    // mark: the ratio stays finite, and a job with little unconfined progress is not held on it.
    Progress at_least_one = confined;
    at_least_one.marks = std::max<std::uint64_t>(confined.marks, 1);
    double confined_rate = at_least_one.per_cpu();
    return confined_rate > 0 ? unconfined.per_cpu() / confined_rate : 0;
}

bool ConfineCheck::handover_bound(const Progress& unconfined, const Progress& confined) noexcept {
    // confined.cpu_ns > 0: checked before deciding.
    last_ratio_ = ratio(unconfined, confined);
    bool busy = static_cast<double>(confined.cpu_ns) >=
                kMinBusyShare * std::max(cpus_, 1) * static_cast<double>(confined.wall_ns);
    return unconfined.marks >= kMinProbeMarks && last_ratio_ > kRatio && busy;
}

bool ConfineCheck::decide(std::uint64_t now, bool after_probe) noexcept {
    probe_ended_ = true;
    // Against the window choose_reference() took as the confined one ended.
    if (handover_bound(probe_, compared_ref_)) {
        if (looks_ > 0) return ++looks_ >= kHandoverLooks ? hold(now) : next_look(now);
        phase_ = Phase::confirm;
        since_ = now;
        confirm_cycle_ = 0;
        confirm_[0] = confirm_[1] = confirm_top_[0] = confirm_top_[1] = Progress{};
        confirm_beyond_ = 0;
        confirm_marked_cycles_ = 0;
        return true;
    }
    // Only a probe that found nothing puts off the next one.
    looks_ = 0;
    if (after_probe) probe_after_.grow();
    start_confined(now);
    return true;
}

bool ConfineCheck::hold(std::uint64_t now) noexcept {
    phase_ = Phase::hold;
    since_ = now;
    first_hold_now_ = !held_before_;
    held_before_ = true;
    // The probe after the hold decides at once, after a look's window.
    looks_ = kHandoverLooks - 1;
    look_ns_ = draw_look_ns();
    return false;
}

bool ConfineCheck::next_look(std::uint64_t now) noexcept {
    look_ns_ = draw_look_ns();
    start_confined(now);
    return true;
}

std::uint64_t ConfineCheck::draw_look_ns() noexcept {
    look_seed_ = look_seed_ * 1664525u + 1013904223u;  // Numerical Recipes' LCG: no alignment, not secrecy
    // A whole number of ms below kLookSpreadNs (the seed's 24 high bits reach 16.7 M, not 250 M ns).
    return kLookMinNs + (look_seed_ >> 8) % (kLookSpreadNs / 1'000'000) * 1'000'000;
}

bool ConfineCheck::decide_confirmed(std::uint64_t now) noexcept {
    probe_ended_ = true;
    // Each kind's cycles pooled, less the one with the most marks: a burst shorter than a cycle
    // falls on one cycle of one kind (confine_check.hpp). What the debug log shows too.
    auto less_top = [](const Progress& pool, const Progress& top) {
        return Progress{pool.marks - top.marks, pool.cpu_ns - top.cpu_ns, pool.wall_ns - top.wall_ns};
    };
    compared_ref_ = less_top(confirm_[0], confirm_top_[0]);
    probe_ = less_top(confirm_[1], confirm_top_[1]);
    // And only a job that marks through its unconfined cycles: one whose marks come in a short
    // burst (enfuse) spends the rest in code that runs as far per CPU-second confined.
    // It ends after an even number of cycles (confined first), half of them unconfined.
    bool throughout = kThroughoutOf * confirm_marked_cycles_ >= kThroughout * (confirm_cycle_ / 2);
    if (compared_ref_.cpu_ns > 0 && handover_bound(probe_, compared_ref_) && throughout) return hold(now);
    // Not confirmed: a change of phase, a burst, or hand-overs in code that makes no marks, which
    // the alternating cycles cannot see (confine_check.hpp). Looks at random moments tell them apart.
    looks_ = 1;
    return next_look(now);
}

}  // namespace apshim
