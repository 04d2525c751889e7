// What the three checks that probe a job share (shim/confine_check.hpp, idle_check.hpp,
// width_check.hpp): the progress counted in a window, the recent part of a window that may run
// for seconds, and the waits that grow between probes and holds. Each check asks its own
// question (progress per CPU-second confined and not; per wall second with and without the idle
// processors; on all of the job's processors and on half of them); these are the parts of the
// answer that are the same. Pure logic, controller thread only.
#pragma once

#include <algorithm>
#include <cstdint>

namespace apshim {

// A window's progress: the job's marks (Sample::marks, and region ends where a check counts
// them), the CPU time it used and the wall time the window lasted.
struct Progress {
    std::uint64_t marks = 0, cpu_ns = 0, wall_ns = 0;
    // Marks per wall (CPU) nanosecond; 0 for a window without wall (CPU) time.
    double per_wall() const noexcept { return per(wall_ns); }
    double per_cpu() const noexcept { return per(cpu_ns); }

private:
    double per(std::uint64_t ns) const noexcept {
        return ns ? static_cast<double>(marks) / static_cast<double>(ns) : 0.0;
    }
};

// The span of a window's recent part, the same for the three checks.
inline constexpr std::uint64_t kRecentNs = 250'000'000;

// The recent part of a window that may last seconds: its last span to 2 span (the whole window
// while it is shorter; span kRecentNs but in tests), kept as two buckets of span. A probe follows
// its window at once, so it is compared with this part, the phase it ran in, and not with every
// phase since the last probe (up to 6.4 s): RawTherapee throttled spent 6 s in long regions that
// make no marks, then 2 s in a marking phase; its whole window read the probe 6x "faster", the
// marking phase alone 0.8x (docs/enforcement.md, twenty-fifth session).
class RecentProgress {
public:
    explicit constexpr RecentProgress(std::uint64_t span = kRecentNs) noexcept : span_(span) {}

    // The window starts now, empty.
    void restart(std::uint64_t now) noexcept {
        cur_ = prev_ = Progress{};
        cur_since_ = prev_since_ = last_ = now;
    }
    // A cycle that ended at `now`.
    void add(std::uint64_t now, std::uint64_t marks, std::uint64_t cpu_ns = 0) noexcept {
        cur_.marks += marks;
        cur_.cpu_ns += cpu_ns;
        last_ = now;
        if (now - cur_since_ >= span_) {
            prev_ = cur_;
            prev_since_ = cur_since_;
            cur_ = Progress{};
            cur_since_ = now;
        }
    }
    // The two buckets together, up to the last cycle added.
    Progress recent() const noexcept {
        return Progress{prev_.marks + cur_.marks, prev_.cpu_ns + cur_.cpu_ns, last_ - prev_since_};
    }

private:
    std::uint64_t span_;
    Progress cur_, prev_;
    std::uint64_t cur_since_ = 0, prev_since_ = 0, last_ = 0;
};

// The recent part of a window counted as a probe must count it too (the idle and width checks):
// the job's region ends, always, and its other progress marks only where every cycle of the
// window counted them (Sample::marks are counted only while the hooks are timed, which is while
// the allotment is below the team; `counted`: the whole cycle). A probe whose allotment fell
// below the team counted marks that its window did not: a libomp job alone beside a hog kept to
// CPU 0 read 3x faster on half its processors, and was held on the hog's CPU at 1.3x its native
// time (docs/enforcement.md, seventieth session). The probe counts what probe_marks() says.
//
// A stretch of kSerialStretchNs or more in which the job did no parallel work at all (`parallel`
// false: no runtime thread busy, no mark, no region end; its program in serial code or I/O) ends
// the window: the phase a probe meets begins after it. Counted in, it read as a job slow in its
// window: FastTree (fasttreeMP, libgomp) spends 1.5 s in serial code between two phases of short
// regions, and a width probe at the second phase's start read 10-13x "faster on half" against a
// window that was mostly that serial stretch; its second look read the same, and it was held on
// one CPU for a second, 12% slower alone than natively (docs/enforcement.md, eighty-seventh
// session). Shorter serial bits (a few ms of Python between BLAS calls) stay in: they dilute a
// 250 ms window by a few percent.
inline constexpr std::uint64_t kSerialStretchNs = 20'000'000;
// The least a reference (a window's recent part) spans before a probe is compared with it. Binds
// only after a serial stretch ended the window: otherwise a probe comes kFirstProbeNs (200 ms or
// more) after its window began, the width check's kWideSettleNs at most of it no reference.
// FastTree's phase after its serial stretch made 32 marks in 16 ms, the slow start of a phase.
inline constexpr std::uint64_t kMinReferenceNs = 100'000'000;

class CountedProgress {
public:
    void restart(std::uint64_t now) noexcept {
        all_.restart(now);
        ends_.restart(now);
        counted_ = true;
        parallel_at_ = now;
    }
    void add(std::uint64_t now, std::uint64_t ends, std::uint64_t marks, bool counted, bool parallel = true) noexcept {
        if (parallel) {
            parallel_at_ = now;
        } else if (now - parallel_at_ >= kSerialStretchNs) {
            const std::uint64_t at = parallel_at_;
            restart(now);  // a serial stretch: the window starts after it
            parallel_at_ = at;
            return;
        }
        all_.add(now, ends + marks);
        ends_.add(now, ends);
        counted_ = counted_ && counted;
    }
    Progress recent() const noexcept { return counted_ ? all_.recent() : ends_.recent(); }
    // What a probe compared with this window counts of a cycle's `ends` and `marks`.
    std::uint64_t probe_marks(std::uint64_t ends, std::uint64_t marks) const noexcept {
        return counted_ ? ends + marks : ends;
    }

private:
    RecentProgress all_, ends_;
    bool counted_ = true;  // every cycle of the window counted marks
    std::uint64_t parallel_at_ = 0;  // the end of the last cycle with parallel work (or the restart)
};

// A wait between probes, or a hold, that grows by `factor` up to `max` and starts over at `first`:
// a job that keeps giving a probe the same answer is asked less and less often.
class Backoff {
public:
    constexpr Backoff(std::uint64_t first, std::uint64_t factor, std::uint64_t max) noexcept
        : first_(first), factor_(factor), max_(max), ns_(first) {}
    std::uint64_t ns() const noexcept { return ns_; }
    void grow() noexcept { ns_ = std::min(ns_ * factor_, max_); }
    void reset() noexcept { ns_ = first_; }

private:
    std::uint64_t first_, factor_, max_, ns_;
};

// The schedule the three checks keep (each sets its first probe). The wait after a probe that
// found nothing to change grows kProbeGrowth times, up to kMaxProbeIntervalNs: a probe costs a job
// that is best left as it is 15-200 ms of worse running, a few percent in its first seconds and
// well under 1% after. A hold (the job kept as the probe found it best) starts at kFirstHoldNs and
// doubles, up to kMaxHoldNs, as the job keeps being found so; after each the job is probed again.
inline constexpr std::uint64_t kProbeGrowth = 4;
inline constexpr std::uint64_t kMaxProbeIntervalNs = 6'400'000'000;
inline constexpr std::uint64_t kFirstHoldNs = 1'000'000'000;
inline constexpr std::uint64_t kMaxHoldNs = 32'000'000'000;
constexpr Backoff probe_interval(std::uint64_t first) noexcept { return Backoff(first, kProbeGrowth, kMaxProbeIntervalNs); }
constexpr Backoff hold_time() noexcept { return Backoff(kFirstHoldNs, 2, kMaxHoldNs); }

}  // namespace apshim
