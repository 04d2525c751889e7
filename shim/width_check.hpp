// Does the job get any further on all of its processors than on half of them?
//
// WSAP (shim/estimators) judges a job by how busy its threads are. A job whose threads are busy
// waiting for each other reads as efficient and keeps every processor DP gives it, though it gets
// further on fewer: threads that spin in sched_yield loops on each other's flags, more threads
// than the job's CPUs, hand work over at once when they share a CPU (the yield switches to the
// thread that was waited for) and only at the kernel's convenience when spread. Debian's xtb
// (OpenMP on libgomp calling the pthreads OpenBLAS from its regions: three threads yielding to
// each other, OpenBLAS#3187) takes 8.1 s alone on the 2-core dev VM, and 3.6 s on one CPU with the
// same threads. The check measures the outcome, as the idle check does for the processors no job
// holds: the job's progress marks (Sample::marks and region_ends) per wall second on its own
// processors, in the last 250-500 ms before a probe, and in the probe on half of them (the first
// half, or the last after a probe that found nothing).
// A job that got kRatio times as far in the probe asks for no more than the probe's width for a
// hold period (its desire is capped, so that DP gives the rest to other jobs or leaves it idle),
// then is measured again; every other job keeps its processors. A probe that met a burst of
// short regions (GraphicsMagick's shape, IQ-TREE's) can read fast from a change of phase, so a
// first such reading is only believed when a second probe, kSecondLookNs later, reads the same: a
// phase change rarely meets two probes apart, a convoy of spinning threads does. (xtb's own
// convoys make almost no marks, so xtb too is read at the boundary between a convoy and its serial
// phase, twice: its narrowing depends on where the probes fall; docs/enforcement.md, eighty-sixth
// session.) Until the twenty-eighth session the first reading held the job narrowed for 1 s:
// IQ-TREE (`--fast`, 1.3 s alone) met a burst of regions with its first probe in about one run of
// three. The probe after a hold needs no second look: a hold grows only while those probes find
// the job faster on fewer again. A reference leaves out the first kWideSettleNs after the job got
// all its processors back (a probe's or a hold's end): xtb gets 1.0-1.8 marks a ms in the 100 ms
// after a probe, against 0.4-0.7 in the seconds that follow (its threads take time to fall back
// into their convoy), so a reference with those 100 ms in it reads xtb's gain as none (which is
// also why the run just after a probe cannot tell a burst from a real gain). Nor is a serial
// stretch part of it: FastTree's 1.5 s of serial code read as a slow reference, and the probe after
// it 10-13x faster on half (CountedProgress, shim/probe_window.hpp).
//
// The job's width is the processors it runs on: its own, and the idle ones while it uses them.
// A job alone whose desire flips between 1 and 2 from cycle to cycle (threads busy half the time:
// OpenBLAS-OpenMP under SciPy beside a CPU hog outside the table) runs on both CPUs either way;
// counting its own alone, every flip started the window afresh and it was never probed (90-108 s
// against 3-4 s narrowed; docs/enforcement.md, thirty-fifth session). A job without marks
// (oneTBB, one long region), at one processor, or on processors that do not map one to one onto
// CPUs (APSHIM_P above the cores) is never probed. Pure logic, controller thread only.
#pragma once

#include <cstdint>

#include "gat/placement.hpp"
#include "shim/probe_window.hpp"

namespace apshim {

// The `w` processors a width probe or hold runs the job on, of `running` (those it runs on: its
// own, `own`, and the idle ones it uses). The first half: its own first (in index order, which is
// placement's topology order: they share caches), then idle ones to make up `w` while DP gives it
// fewer. The other half (`other`: the check turns there after a probe that found nothing on the
// first, and compares it with the first once that gains): the last `w` of the rest, own and idle
// alike, never one of the first half's. "The last `w` of all it runs on", the rule until the
// forty-fifth session, was the first half again where the job's own processors were its highest
// (own 1, idle 0 at P = 2); "the last of its own" would be the first half again for a job that
// shrank, which keeps the lowest of its own (gat/placement.hpp: alone at P = 2, own 0, idle 1).
gat::ProcSet width_half(const gat::ProcSet& own, const gat::ProcSet& running, int w, bool other) noexcept;

class WidthCheck {
public:
    enum class Phase { off, wide, probe, narrowed };

    // The first probe after kFirstProbeNs wide (and once the reference has kMinMarks marks at a
    // rate that a probe can match within kMaxProbeNs), the next after kProbeGrowth times as long
    // when the probe found nothing, up to kMaxProbeIntervalNs (probe_window.hpp). The reference is
    // the wide window's last kRecentNs to 2 kRecentNs (its whole when shorter): the phase the probe
    // follows at once. A probe counts from kSettleNs after the switch (threads moving between CPUs,
    // caches refilling) and lasts at least kDecideNs, until it has kMinMarks marks, kMaxProbeNs at
    // most; one that reads slower than the reference once kMinProbeNs passed ends there (a job that
    // needs its processors loses half of them for 30 ms). xtb read 1.1x in 30 ms probes, 1.4-3x in
    // 100 ms ones (2.3x over its whole run). A hold starts at kFirstHoldNs and doubles each time
    // the probe after it finds the job faster on fewer again, up to kMaxHoldNs; a probe that finds
    // nothing brings it back to kFirstHoldNs.
    static constexpr std::uint64_t kFirstProbeNs = 250'000'000;
    static constexpr std::uint64_t kSettleNs = 10'000'000;
    static constexpr std::uint64_t kMinProbeNs = 30'000'000;
    static constexpr std::uint64_t kDecideNs = 100'000'000;
    static constexpr std::uint64_t kMaxProbeNs = 200'000'000;
    // xtb makes 300-1000 region ends a second: 32 take it 30-100 ms.
    static constexpr std::uint64_t kMinMarks = 32;
    // Narrowed only when the probe got this much further per wall second than the reference:
    // a job that needs its processors reads about half as far on half of them, one bound by
    // memory about as far; only a job its own threads slow down reads further.
    static constexpr double kRatio = 1.25;
    // A probe that got more than this share of its marks in one cycle met a burst (a phase's
    // boundary: hundreds of short regions at once), not a gain. idba_ud runs long regions without
    // region ends and, between phases, bursts of them; its reference becomes enough (kMinMarks)
    // as a burst arrives, so a probe starts in one, and the second look did too: 208 of its 218
    // region ends in one cycle read 7.6x, and it was held on one CPU for a second (1 alone run of
    // 7; docs/enforcement.md, eighty-eighth session). xtb's gain reads steadily, 15-30 a cycle.
    static constexpr double kMaxBurstShare = 0.5;
    // Probes in a row that may end without a reading: a probe that read slower by kMinProbeNs
    // with not one mark, or with more than kMaxBurstShare of them in one cycle, while the job's
    // threads worked (half a processor in one of its counted cycles at least), met a stretch
    // without marks (the job went from short regions into a long one as the probe began), which
    // says nothing of its width. SciPy beside a CPU hog (OpenBLAS's long regions between bursts
    // of short ones) met one with its first probe at 0.26 s in 10 runs of 12 (no region end, or
    // all but one in one cycle, in 9 of them); read as "nothing to gain", it put the next probe a
    // second later, on the other half, and the job ran its convoy on both CPUs until then
    // (3.1-3.5 s against 2.3-2.6 s where the first probe read the gain; docs/enforcement.md,
    // eighty-ninth session). Where its threads never worked, they got no CPU on that half (a hog
    // kept there at a priority the job cannot match: omp.*.outside_load), and that is a reading:
    // without the condition, a CI run held such a job wide, its probes there voided. One in a row:
    // a job whose probes keep meeting such stretches (or whose marks are that sparse) is read as
    // before from the second on, at the cost of one more 30 ms probe each time.
    static constexpr int kMaxVoidProbes = 1;
    // The wide window between a first reading of "faster on fewer" and the probe that confirms it.
    static constexpr std::uint64_t kSecondLookNs = 350'000'000;
    // After a probe or a hold, the part of the wide window that is no reference.
    static constexpr std::uint64_t kWideSettleNs = 100'000'000;

    // One controller cycle: `ends` and `marks` are what the job did in the cycle just ended (its
    // region ends, counted always, and its other progress marks, counted only while its hooks are
    // timed: `counted`, the whole cycle), `width` the processors it holds now, `active`: the job
    // can be checked now (it makes progress marks, its processors are CPUs of its own, nothing
    // else decides its CPUs this cycle). Returns the processors the job runs on from now on:
    // `width`, or fewer during a probe. A probe counts what its reference counted
    // (CountedProgress): a job whose desire fell to 1 in the probe (its threads waiting on a
    // teammate that shares a CPU with a hog) counted marks there and none wide.
    // `parallel`: the job did some parallel work in the cycle (a runtime thread busy, a mark or a
    // region end); a serial stretch ends the wide window (CountedProgress says why), and the
    // reference that follows must span kMinReferenceNs (probe_window.hpp) before a probe is
    // compared with it. `working`: the job's runtime threads worked at least half a processor's
    // time in the cycle (a probe without marks in which they never did read the job's width: its
    // threads got no CPU there; kMaxVoidProbes).
    int step(std::uint64_t now_ns, std::uint64_t ends, int width, bool active, std::uint64_t marks = 0,
             bool counted = false, bool parallel = true, bool working = true) noexcept;

    // The most processors the job may ask for (its desire's cap): 0 (none) but while narrowed.
    int cap() const noexcept { return phase_ == Phase::narrowed ? narrow_ : 0; }
    // A probe runs the job on probe_width() of its processors only, and so does a hold: the first
    // ones, or the last ones where on_last_half(). A probe that finds nothing turns the next one to
    // the other half: load no table sees may keep to one CPU (a process pinned there, or one the
    // kernel leaves there), and a probe on that CPU reads no gain where the other CPU would give
    // one. A reading of "faster" keeps its half for the second look. Once the second look confirms
    // it, the other half is probed too, at once, unless its last probe found nothing, and the hold
    // runs on the half that got further: beside a hog pinned to the job's first CPU at the job's
    // priority, the job narrowed there gets a share of that CPU, more than its convoy wide (a gain)
    // and less than the other CPU gives. The probe after a hold stays on the held half.
    int probe_width() const noexcept { return narrow_; }
    bool on_last_half() const noexcept { return last_half_; }
    // Probing or narrowed: the job runs on probe_width() processors; on the first half its own
    // first, idle ones only to make up that many (a narrowed job alone leaves idle the processors it
    // gave up; the idle check would hand them back); on the last half the last of all it runs on
    // (shim/controller.cpp, apply_allotment).
    bool narrows() const noexcept { return phase_ == Phase::probe || phase_ == Phase::narrowed; }
    Phase phase() const noexcept { return phase_; }
    static const char* name(Phase p) noexcept;
    // The last decision's ratio of the probe's progress per wall second to the reference's (0: none
    // yet), and whether the step just made ended a probe (for the debug log, and for the
    // controller, which spreads the job's threads over its CPUs again at once).
    double last_ratio() const noexcept { return last_ratio_; }
    bool decided() const noexcept { return decided_; }
    // The probe that just ended decided nothing: no mark, or a burst's, while the job's threads
    // worked (kMaxVoidProbes).
    bool voided() const noexcept { return voided_; }
    // The share of the last decided probe's counted marks that came in its busiest cycle
    // (kMaxBurstShare).
    double last_peak_share() const noexcept { return last_peak_share_; }
    // Whether the decision just made followed a probe of the other half (the comparison above),
    // the ratio of the half whose gain was confirmed first and that of the other (last_ratio() is
    // then the held half's).
    bool compared_now() const noexcept { return compared_now_; }
    double first_ratio() const noexcept { return half_ratio_; }
    double other_ratio() const noexcept { return other_ratio_; }
    // True once, at the step that narrowed the job the first time (one line on stderr).
    bool first_narrowing_now() const noexcept { return first_narrowing_now_; }
    std::uint64_t hold_ns() const noexcept { return hold_.ns(); }

private:
    void start_wide(std::uint64_t now, int width) noexcept;
    // A probe on probe_width() processors of the half last_half_ says, from now.
    void start_probe(std::uint64_t now) noexcept;
    // The probe is over: narrow the job or keep it wide. Returns the width to run at.
    int decide(std::uint64_t now, bool narrower_faster) noexcept;
    // The probe is over without a reading (kMaxVoidProbes): wide again. Returns the width.
    int void_probe(std::uint64_t now) noexcept;
    // More than kMaxBurstShare of the probe's counted marks came in one cycle.
    bool burst() const noexcept {
        return static_cast<double>(probe_peak_) > kMaxBurstShare * static_cast<double>(probe_.marks);
    }
    // Holds the job narrowed on its probe's half. Returns the width to run at.
    int hold(std::uint64_t now) noexcept;

    Phase phase_ = Phase::off;
    std::uint64_t since_ = 0;
    Backoff probe_after_ = probe_interval(kFirstProbeNs);
    Backoff hold_ = hold_time();
    int width_ = 0, narrow_ = 0;
    CountedProgress wide_;  // the wide window (its recent part)
    Progress probe_, ref_;
    std::uint64_t probe_peak_ = 0;  // the most marks one cycle of the probe counted
    bool probe_worked_ = false;     // the job's threads worked in a counted cycle of the probe
    double last_ratio_ = 0, last_peak_share_ = 0;
    bool narrowed_before_ = false;
    bool held_last_ = false;  // the last probe narrowed the job (the next hold doubles)
    bool second_look_ = false;  // the last probe read faster on fewer; the next one decides
    bool last_half_ = false;    // the next probe and hold run on the job's last processors
    bool other_half_found_nothing_ = false;  // the last decision found nothing on the half not last_half_
    bool comparing_ = false;    // the probe runs on the other half of the one that gained (half_ratio_)
    double half_ratio_ = 0, other_ratio_ = 0;
    bool compared_now_ = false;
    std::uint64_t reference_from_ = 0;  // the wide window's reference begins no earlier
    bool first_narrowing_now_ = false;
    bool decided_ = false;
    bool voided_ = false;
    int void_probes_ = 0;  // probes in a row that ended without a reading
};

}  // namespace apshim
