// Do the processors no job holds make this job any faster?
//
// APSHIM_USE_IDLE lets a job's threads also run on the table's processors that no job holds, so
// that they are not left idle (a job alone, a serial co-runner). That helps a job whose threads
// compute, and can hurt one whose threads mostly hand work to each other: spread over more CPUs,
// each of the thousands of hand-overs a second wakes a thread on another CPU (an inter-processor
// interrupt, an idle CPU waking up) where one CPU would switch threads in place. Debian's
// tesseract runs a 4-thread team per LSTM step (num_threads(4), about 25,000 regions a second):
// alone on the 2-core dev VM it takes 7.6 s natively and with the shim at desire 1 on both CPUs,
// 4.7 s confined to its one allotted CPU (1.3 s with one thread, which OpenMP's promise of 4
// rules out). The check measures the outcome, as the confinement check does, but per wall second:
// the job's progress marks (Sample::marks) per second with the idle processors and in a short
// probe without them. A job that gets kDeclineRatio times as far without them is kept to its own
// processors for a hold period, then measured again; every other job keeps them.
//
// A job with no progress marks (oneTBB, one long region) is never probed: it keeps the idle
// processors, as before this check. Where the job's own processors are half of those it runs on
// (alone at desire 1 on 2 CPUs), the width check asks the same question and tries the idle half
// too, and this check stands aside (shim/controller.cpp: same_question). Pure logic, controller
// thread only.
#pragma once

#include <cstdint>

#include "shim/probe_window.hpp"

namespace apshim {

class IdleCheck {
public:
    enum class Phase { off, with_idle, probe, declined };

    // The first probe after kFirstProbeNs with the idle processors (and once that window's last
    // kRecentNs to 2 kRecentNs, the reference, have kMinMarks marks), the next after kProbeGrowth
    // times as long when the idle processors helped, up to kMaxProbeIntervalNs (probe_window.hpp);
    // a probe lasts kProbeNs. A hold without them starts at kFirstHoldNs and doubles each time they
    // are found useless again, up to kMaxHoldNs; after a hold the job gets them back and is probed
    // after kFirstProbeNs. A probe of a job the idle processors help costs it at most kProbeNs of
    // their work in kFirstProbeNs, then less and less (about 2% after the first seconds); a hold
    // costs a job they did not help nothing.
    static constexpr std::uint64_t kFirstProbeNs = 200'000'000;
    static constexpr std::uint64_t kProbeNs = 30'000'000;
    // Both windows need this many marks to be compared (a serial phase makes none).
    static constexpr std::uint64_t kMinMarks = 64;
    // Declined only when the job gets this much further per wall second without the idle
    // processors: where both read alike, the job keeps them (noise must not cost it CPUs).
    static constexpr double kDeclineRatio = 1.1;

    // One controller cycle: `ends` and `marks` are what the job did in the cycle just ended (its
    // region ends, and its other progress marks, counted where `counted`: CountedProgress);
    // `active`: there are idle processors the job may use, it can make progress marks, and
    // nothing else overrides its CPUs this cycle (the confinement check's start, probes and
    // holds). `parallel`: the job did some parallel work in the cycle (a runtime thread busy, a
    // mark or a region end); a serial stretch ends the window with the idle processors, and the
    // reference that follows must span kMinReferenceNs before a probe is compared with it, as in
    // the width check (a window mostly serial read a probe many times "faster" without them).
    // Returns whether the job's threads may run on the idle processors from now on.
    bool step(std::uint64_t now_ns, std::uint64_t ends, bool active, std::uint64_t marks = 0,
              bool counted = false, bool parallel = true) noexcept;

    bool with_idle() const noexcept { return phase_ == Phase::off || phase_ == Phase::with_idle; }
    Phase phase() const noexcept { return phase_; }
    static const char* name(Phase p) noexcept;
    // The last probe's ratio of progress per wall second without the idle processors to with them
    // (0: none yet), and whether the step just made ended a probe (for the debug log).
    double last_ratio() const noexcept { return last_ratio_; }
    bool probe_ended() const noexcept { return probe_ended_; }
    // True once, at the step that declined the idle processors the first time (one line on stderr).
    bool first_decline_now() const noexcept { return first_decline_now_; }

private:
    void start_with_idle(std::uint64_t now) noexcept;
    // The end of a probe: compare, then keep the idle processors or hold the job without them.
    bool decide(std::uint64_t now) noexcept;

    Phase phase_ = Phase::off;
    std::uint64_t since_ = 0;
    Backoff probe_after_ = probe_interval(kFirstProbeNs);
    Backoff hold_ = hold_time();
    CountedProgress with_;  // the window with the idle processors (its recent part)
    Progress without_;
    double last_ratio_ = 0;
    bool declined_before_ = false;
    bool first_decline_now_ = false;
    bool probe_ended_ = false;
};

}  // namespace apshim
