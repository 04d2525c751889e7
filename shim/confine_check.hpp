// Does confinement cost this job more than the processors it takes away?
//
// Confined to fewer CPUs than it has threads, a job's threads time-share those CPUs. That costs
// little while they compute, and everything while they hand work to each other thousands of times
// a second: every hand-over then waits for a context switch, or for the kernel's tick where the
// waiter spins in the program's own code (NPB LU built with gcc: 0.02 s with one thread, 4-20 s
// with two threads on one CPU; LLVM's omp_for_collapse: 0.01 s, 1.5 s). No runtime hook sees
// such a spin, so the check measures the outcome instead: the job's progress marks per CPU-second
// it used, confined and in a short probe unconfined. Marks are runtime calls whose number the
// program fixes however its threads are scheduled (tasks made and run, chunks fetched, ordered
// turns, barriers and taskwaits entered: Sample::marks), and every thread's kind of progress is
// marked (a thread making a task graph up front, another running it), so that confined and
// unconfined runs of the same phase count alike. A job that gets more than kRatio times as far
// per CPU-second unconfined is hand-over bound: it is not confined for a hold period (running as
// it would without the shim), then measured again. Per CPU-second, not per wall second, so that a
// compute-bound job reads the same either way (it needs the same CPU per task wherever it runs),
// whatever the co-runners do while it probes.
//
// A job is not throttled in its first kStartNs with fewer processors than threads: a job that ends
// sooner cannot be judged in time, and confined it could take 25 times as long (NPB LU.S built
// with gcc: 0.01 s natively, 0.26 s confined until its first probe), while the CPUs it keeps from
// its co-runners meanwhile are at most kStartNs' worth. That start is the first probe, run as a
// probe is (no parking either: parking there made BOTS fib-if, health and uts read 3x the progress
// per CPU-second of their confined runs, which a hold without parking would not give them): after
// kFirstCompareNs confined the two windows are compared. A start spent in a construct with sparse
// marks or none (a long region of static loops) ends sooner (kSparseStartNs).
//
// A comparison of two windows one after the other can read a change of phase: Debian's enfuse
// (libgomp) makes its marks in bursts between long regions of static loops, and its start and
// a probe that met bursts read 6x and 15x the progress of the confined windows before them,
// though two threads on one CPU take it as long as one thread does. Held unconfined, it used 1.23
// CPUs at allotment 1. So a comparison that finds a job hand-over bound is confirmed before the
// hold: kConfirmCycles controller cycles, confined and unconfined in turn, pooled by kind and
// compared the same way. A burst longer than a few cycles falls on both kinds alike; a job really
// bound by its hand-overs reads so again, since confined it makes next to nothing. (Slices of
// 15 ms in the order confined, unconfined, unconfined, confined were fooled by a 30 ms burst on
// the middle two, 1 run in 5.) A burst within one cycle falls on one kind only, so each pool
// leaves out its cycle with the most marks: in a CI run at 3bba3a6 enfuse's confirmation met 57
// marks in one unconfined cycle, 2 in its seven others and 14 in the confined ones, most of them
// serial code after the burst, read 4.2x and was held (1.18 CPUs at allotment 1). Where the
// confirmation fails, the job is looked at again at random moments (kHandoverLooks): hand-overs
// in code that makes no marks read alike in its cycles.
//
// Pure logic, controller thread only: the controller feeds it each cycle's counts.
#pragma once

#include <algorithm>
#include <cstdint>

#include "shim/probe_window.hpp"

namespace apshim {

class ConfineCheck {
public:
    enum class Phase { idle, start, confined, probe, confirm, hold };

    // Timing of probes and holds (ns). A confined window begins at its first mark or inside a
    // parallel construct (CPU time spent in serial code before it made a mark is no reference).
    // A window that makes no marks in a construct, of a job that has made marks before, is
    // probed on time like one that makes them: a hand-over stalled in code that makes no marks
    // (a sweep of NPB LU's shape, tests/omp/omp_sweeps.c: confined, one sweep took a second,
    // which the window skipped while it began at its first mark) makes marks again once
    // unconfined; a long region that makes none makes none in the probe either, and the
    // intervals grow as after any probe that found nothing. The start (kStartNs unconfined) is
    // compared with the window's first kFirstCompareNs; the first probe after a window of
    // kFirstProbeNs (and once it has kMinRefMarks marks, or kMaxRefNs passed), the next after
    // kProbeGrowth times as long when it found nothing, up to kMaxProbeIntervalNs (probe_window.hpp);
    // a probe lasts kProbeNs (up to kMaxProbeNs after a stall, below); a hold starts at
    // kFirstHoldNs and doubles each time the job is found hand-over bound again, up to kMaxHoldNs.
    // A probe runs the job on all its CPUs: with 30 ms probes after 0.1, 0.3 and 0.7 s, a 0.8 s
    // task program throttled to one CPU used 1.13 instead of 1.02; these cost it about 2%.
    static constexpr std::uint64_t kStartNs = 100'000'000;
    // A start whose job runs in a parallel construct that makes marks too sparse for a
    // hand-over-bound job ends early, in a stretch of construct (from its first cycle end, begun
    // anew at each cycle end outside one):
    // - with marks, but fewer than one per kSparseMarkCpuNs of the CPU it used, once the stretch
    //   has lasted kSparseStartNs or used kSparseStartNs of CPU beyond one CPU's worth (the same
    //   on 2 CPUs; a cycle from 4 CPUs up). The peer suites'
    //   programs whose starts marked least (throttled, 2 CPUs) made 0.35-1.4 marks per CPU-ms
    //   there, NPB LU.W, which is hand-over bound, 1.1-1.3; LLVM's omp_for_collapse and
    //   omp_single over a thousand; GraphicsMagick's blur (guided chunks: none in its first 30
    //   ms, then one every 5-20 ms) 0.06.
    // - without a mark, once it has used kQuietStartSurplusNs of CPU beyond one CPU's worth (40
    //   ms on 2 CPUs, 10 ms on 5, a cycle from 10 CPUs up). A markless stretch may be a hand-over
    //   phase whose hand-overs make no marks (a sweep of NPB LU's shape) rather than a long region
    //   of static loops; cut short, the rest of such a sweep runs confined at a twentieth of its
    //   speed until its first mark: tests/omp/omp_sweeps.c with 31 ms sweeps, the first at its
    //   start, took 2.3-5.8 s throttled (median 4.1) with a 10 ms cut, 1.7-2.3 s with this.
    // Bounds in CPU beyond one CPU, not in wall time, so that a wide machine's start costs the
    // co-runners what a 2-CPU machine's does (on 16 CPUs each ms of it takes 15 CPU-ms of theirs).
    // A long region of static loops runs as fast on one CPU with its threads time-shared, so the
    // rest of its start only takes the surplus CPUs from the co-runners, and that grows with the
    // machine's width: NPB EP.W at allotment 1 of 16 used 1.36-1.66 CPUs with a 45 ms start; a
    // pipeline of 0.28 s `gm convert -blur 0x24` processes at allotment 1 on 2 CPUs 1.19-1.48
    // with starts that ended only after 40 ms without a mark (kQuietStartNs until the
    // thirty-fourth session), 1.11-1.14 with this, 1.01 with no start at all. A start that ends
    // with fewer than kMinProbeMarks cannot be compared anyway, so the job meets its first probe
    // as before; what it loses is a hand-over phase that begins after such a stretch and within
    // the start's 100 ms, which is then found by its first probe instead.
    static constexpr std::uint64_t kSparseStartNs = 10'000'000;
    static constexpr std::uint64_t kSparseMarkCpuNs = 10'000'000;
    static constexpr std::uint64_t kQuietStartSurplusNs = 40'000'000;
    static constexpr std::uint64_t kFirstCompareNs = 50'000'000;
    static constexpr std::uint64_t kFirstProbeNs = 250'000'000;
    static constexpr std::uint64_t kMaxRefNs = 1'600'000'000;
    // A probe lasts kProbeNs, or less where it reads far from hand-over bound (at most kRatio / 2,
    // with kMinProbeMarks marks) once it has used kProbeNs of CPU beyond the window's CPUs, what a
    // probe at allotment 1 of 2 CPUs uses: the same on 2 CPUs, one cycle on 16, where its 15 ms
    // took 225 CPU-ms from the co-runners (GraphicsMagick's blur at allotment 1 of 16 used 1.36
    // CPUs, compute-bound BOTS programs up to 1.11; thirty-third session). A reading near or
    // above the ratio, or after a stall (below), runs its whole length.
    static constexpr std::uint64_t kProbeNs = 15'000'000;
    // A probe of a job that made no mark in the last kStalledNs of its confined window (a sweep
    // stalled by confinement, below) that has fewer than kMinProbeMarks when kProbeNs is up, which
    // could only read "not hand-over bound" (handover_bound), goes on until it has them, up to
    // kMaxProbeNs: the stalled sweep needs its unconfined rest and the marking loop after it.
    // omp_sweeps with sweeps of 31 ms unconfined (50 iterations of 600 hand-overs, 1.6 s natively)
    // ran 2.1-120 s throttled (median 13.2 s of 21 runs) with 15 ms probes, which read 0 marks and
    // grew the intervals to 6.4 s; 2.0-3.2 s (median 2.1 s of 10) with this. Only there: a job
    // whose marks are merely sparse (GraphicsMagick's blur, 13 in a 250 ms window) made none in
    // 60 ms probes either, and paid 0.03 CPUs more at allotment 1 for them.
    static constexpr std::uint64_t kStalledNs = 100'000'000;
    static constexpr std::uint64_t kMaxProbeNs = 60'000'000;
    // The confirmation: this many cycles (80 ms at the default 5 ms), confined first.
    static constexpr int kConfirmCycles = 16;
    // A confirmation holds the job only where at least kThroughout / kThroughoutOf of its
    // unconfined cycles made a mark: a job bound by its hand-overs makes them all along. enfuse's
    // bursts of region ends last 2-4 cycles, hand-over bound while they last (8 marks confined,
    // 57 unconfined), between long regions of static loops that make none either way; a
    // confirmation that met one read it hand-over bound in 14 of 47 confirmations (enfuse probed
    // every 50 ms to find them), with marks in 2-4 of its 8 unconfined cycles, and held the job
    // unconfined for a second, where its bursts were a tenth of its time. A job that hands
    // over with sparser marks than that fails the confirmation and is held by its looks.
    static constexpr int kThroughout = 3, kThroughoutOf = 4;
    // Hand-overs in code that makes no marks (NPB LU's pipelined sweeps, threads spinning on
    // flags) the confirmation cannot see: its confined cycles stall the sweep, which goes on in
    // the unconfined ones, so both kinds of cycle spend alike on it and read alike (4 of 6
    // confirmations of LU.W failed; each grew the interval to the next probe, which left LU.W
    // confined for up to 6.4 s at a time: 4.7-46 s throttled against 3.1 s with one thread).
    // Where a confirmation fails, the job is looked at again: a confined window of kLookMinNs
    // plus a pseudo-random part of kLookSpreadNs, then a probe. kHandoverLooks comparisons in a
    // row that read hand-over bound (the first, then each look) hold it; a job whose probe met
    // a burst of marks (enfuse) meets one at a random moment as seldom as its bursts are
    // frequent, twice in a row more seldom still, and a window of random length does not keep
    // step with a program's period as the fixed intervals do. The probe after a hold decides
    // at once (one reading).
    static constexpr int kHandoverLooks = 3;
    static constexpr std::uint64_t kLookMinNs = 150'000'000;
    static constexpr std::uint64_t kLookSpreadNs = 250'000'000;
    // The reference a probe is compared with: the confined window's last kRecentNs to 2 kRecentNs
    // (probe_window.hpp) when they have kMinProbeMarks, else the whole window (choose_reference).
    static constexpr std::uint64_t kMinRefMarks = 4;
    static constexpr std::uint64_t kMinProbeMarks = 8;
    // The yardstick of issue #13: a throttled program may take at most 3x its one-thread time.
    static constexpr double kRatio = 3.0;
    // A job that kept less than this share of its confined CPUs busy is not short of CPU there,
    // whatever the ratio (tasks that sleep: the marks per CPU-second of a nearly idle job are noise).
    static constexpr double kMinBusyShare = 0.5;
    // APSHIM_CHECK_BOUND (on by default since the sixty-fifth session measured it on 16 CPUs; the
    // class's own default is the unbounded check, which the unit tests compare it with): every unconfined
    // window ends once it has used, beyond the job's own CPUs, what it uses at allotment 1 of 2
    // CPUs, so that it costs the co-runners the same CPU time at any width (on 16 CPUs each ms of
    // a window takes up to 15 CPU-ms of theirs: GraphicsMagick's blur with 16 threads ran 115-235
    // ms unconfined, docs/enforcement.md). The start ends at kStartNs beyond one CPU (whatever its
    // marks), a probe at kProbeNs beyond its CPUs (kMaxProbeNs after a stall), and a
    // confirmation once its unconfined cycles have used kConfirmCycles / 2 cycles' length beyond
    // its CPUs (a cycle: the mean of its confined ones, which run whole), after
    // kMinBoundedConfirmCycles (each pool, less its top cycle, keeps one); each of its unconfined
    // cycles ends once it has used its share of that, kConfirmCycles / kMinBoundedConfirmCycles
    // cycles' length (confirm_cycle_bound), so that the first kMinBoundedConfirmCycles spend it
    // (on 16 CPUs each of GraphicsMagick's whole unconfined cycles used 49-79 ms of CPU, and its
    // confirmations 50-112 ms beyond one CPU where the bound is 40: bench/results/
    // 2026-12-05e-device16core). On 2 CPUs nothing changes: the surplus there never exceeds the
    // wall time. The trade on wide machines: a hand-over-bound program that ends within the start's 100 ms is
    // confined before it is compared (on 16 CPUs the start, its first cycle counted (begin), lasts
    // about 7 ms: window_spent, below), a sweep stalled by confinement gets 4 ms instead of 60 to
    // finish unconfined, and a burst shorter than a cycle that falls on a bounded confirmation's
    // one cycle of a kind is left out no longer; its unconfined cycles last about 2 ms on 16 CPUs,
    // so a hand-over-bound job that marks more sparsely than that fails it and is held by its
    // looks, whose probes are as short.
    static constexpr int kMinBoundedConfirmCycles = 4;
    void set_bounded(bool bounded) noexcept { bounded_ = bounded; }
    // The looks' windows are drawn from this seed (a fixed one unless told: the unit tests replay
    // a job exactly). The controller seeds each process apart: with one sequence for all, every run
    // of a program whose bursts recur on time met them at the same points of its looks (enfuse,
    // probed every 50 ms: its looks lasted 203 ms, then 280 ms, in each run).
    void seed_looks(std::uint32_t seed) noexcept { look_seed_ = seed; }

    // With the bound, one cycle at full width passes a window's bound several times over on a
    // wide machine (on 16 CPUs a 5 ms cycle is 75 ms of CPU beyond one CPU, a probe's bound 15).
    // So while the start or a probe is open (window_bounded()), the controller reads the
    // process's CPU time between cycles, every kPeekNs, and ends the cycle early once
    // window_spent() says that a step now, with `cpu_ns` more CPU time than the steps so far
    // counted, would end the window: it then ends within a peek of its bound. A step at the same
    // `now` with at least that CPU time does end it (the same test, and CPU time only grows), so
    // an early cycle closes the window it was run for (but a start whose stretch of construct read
    // markless at the peek and whose cycle made marks densely, once a stretch: peek_construct;
    // hence kMaxEarlyCycles). A confirmation's unconfined cycle is such a window too, with its
    // share of the confirmation's bound (confirm_cycle_bound); the confined cycle after an early
    // one runs whole, and it pools the cycles by kind, whatever their length.
    static constexpr std::uint64_t kPeekNs = 1'000'000;
    // Early cycles the controller may run between two cycle ends: one at the bound, one more for
    // a start whose stretch read markless at a peek and marked after all (peek_construct). More
    // could only come from a window that an early cycle did not close, which would turn every
    // peek into a cycle.
    static constexpr int kMaxEarlyCycles = 2;
    bool window_bounded() const noexcept {
        return bounded_ && (phase_ == Phase::start || phase_ == Phase::probe ||
                            (phase_ == Phase::confirm && confirm_unconfined(confirm_cycle_)));
    }
    bool window_spent(std::uint64_t now, std::uint64_t cpu_ns) const noexcept;
    // At a peek in the start (starting()): whether one of the job's threads is in a parallel
    // construct now (as step's `in_construct`), with `cpu_ns` CPU time since the last step. A
    // stretch of construct begins here rather than at the next cycle end, and window_spent ends
    // the start at the peek where its stretch, without a mark counted yet, reads sparse as if the
    // cycle had made none (kQuietStartSurplusNs; its step finds out: a start whose cycle marked
    // densely goes on, and the controller may end that cycle once more, at the bound). On 16 CPUs
    // GraphicsMagick's and NPB EP.W's starts ran on to their 100 ms bound: the stretch began at
    // the first cycle end in their region, which the bound's early cycle already was.
    void peek_construct(std::uint64_t now, std::uint64_t cpu_ns, bool in_construct) noexcept;

    // The controller's first look at the job (its first allotment, before any cycle). A job that
    // would start at its first step (markable, and its allotment confines it) starts now instead,
    // so that its first cycle counts in its start, CPU time and marks, as the unconfined window it
    // is: on 16 CPUs that cycle ran 7-10 ms at full width before the step that began the start
    // (80-160 ms of CPU for NPB EP.W at allotment 1, bench/results/2026-12-04c-device16core),
    // and the start then ran 2 cycles more. A start is a window like any other (window_bounded).
    void begin(std::uint64_t now, bool confinable, bool markable) noexcept {
        if (phase_ == Phase::idle && !started_ && confinable && markable) enter_start(now);
    }

    // One controller cycle: `marks` and `cpu_ns` are what the job did in the cycle just ended (its
    // progress marks, the process's CPU time), `cpus` the CPUs it was confined to then (0: none);
    // `confinable`: the allotment now asks for fewer CPUs than the job may use (confinement would
    // restrict it); `markable`: one of its runtimes counts progress marks (a job that can make none,
    // oneTBB alone, gets no start: it could never be compared); `in_construct`: one of its threads
    // was inside a parallel construct as the cycle ended (Adapter::activity), so that CPU time
    // without marks there is a stall, not serial code. Returns whether to confine from now on.
    bool step(std::uint64_t now_ns, std::uint64_t marks, std::uint64_t cpu_ns, int cpus, bool confinable,
              bool markable = true, bool in_construct = false) noexcept;

    // What the last step() said, for reallocations between cycles: confine, or keep the job wholly
    // unthrottled (its start, a probe, a confirmation's unconfined cycles: the job runs as without
    // the shim, so that its progress unconfined is measured; a hold: confinement slows it).
    bool starting() const noexcept { return phase_ == Phase::start; }
    bool suspends() const noexcept {
        return phase_ == Phase::start || phase_ == Phase::probe || phase_ == Phase::hold ||
               (phase_ == Phase::confirm && confirm_unconfined(confirm_cycle_));
    }
    // The check, not the allotment alone, decides the job's CPUs now (its start, a probe or its
    // confirmation, a hold): the idle and width checks stand aside.
    bool overrides() const noexcept { return phase_ != Phase::idle && phase_ != Phase::confined; }
    Phase phase() const noexcept { return phase_; }
    // The last probe's ratio of unconfined to confined progress per CPU-second (0: none yet).
    double last_ratio() const noexcept { return last_ratio_; }
    // True once, at the step that started a hold the first time (for one line on stderr).
    bool first_hold_started() const noexcept { return first_hold_now_; }
    std::uint64_t hold_ns() const noexcept { return hold_.ns(); }
    static const char* name(Phase p) noexcept;
    // The windows the last probe compared (for the debug log).
    const Progress& confined_window() const noexcept { return compared_ref_; }
    const Progress& probe_window() const noexcept { return probe_; }
    // True at the step that ended a probe.
    bool probe_ended() const noexcept { return probe_ended_; }

private:
    void enter_start(std::uint64_t now) noexcept;
    void start_confined(std::uint64_t now) noexcept;
    // Whether an open start or probe, having used `window_cpu_ns` of CPU by `now`, has spent its
    // bound (bounded_ only).
    bool bound_spent(std::uint64_t now, std::uint64_t window_cpu_ns) const noexcept;
    // Whether the start's stretch of construct, with this progress in it by `now`, is too sparse
    // in marks for a hand-over-bound job (kSparseStartNs).
    bool sparse_stretch(std::uint64_t now, const Progress& stretch_progress) const noexcept;
    // As the confined window ends (a probe begins, or the start is compared): the window to
    // compare with (compared_ref_).
    void choose_reference(std::uint64_t now) noexcept;
    // The end of a probe (or of the start): compare its window with the confined one, then
    // confirm a job that reads hand-over bound, or confine it again. Returns whether to confine.
    // `after_probe`: a probe ended (not the start), whose finding nothing grows the interval.
    bool decide(std::uint64_t now, bool after_probe) noexcept;
    // The end of the confirmation: hold the job unconfined, or confine it again.
    bool decide_confirmed(std::uint64_t now) noexcept;
    // Starts a hold (the job unconfined for hold_); returns false (do not confine).
    bool hold(std::uint64_t now) noexcept;
    // Confines the job for a look's window (look_ns_, drawn anew), then probes it.
    bool next_look(std::uint64_t now) noexcept;
    std::uint64_t draw_look_ns() noexcept;
    // Whether the ratio of `unconfined` to `confined` progress per CPU-second says hand-over bound
    // (sets last_ratio_).
    bool handover_bound(const Progress& unconfined, const Progress& confined) noexcept;
    static double ratio(const Progress& unconfined, const Progress& confined) noexcept;
    // The CPU time beyond `cpus` CPUs' worth over `wall_ns` (what a window unconfined took from
    // the co-runners' CPUs).
    static std::uint64_t beyond(std::uint64_t cpu_ns, int cpus, std::uint64_t wall_ns) noexcept;
    static constexpr bool confirm_unconfined(int cycle) noexcept { return cycle % 2 == 1; }
    // The length of a cycle in the confirmation: the mean of its confined cycles so far (they
    // run whole; it begins with one).
    std::uint64_t confirm_cycle_ns() const noexcept {
        return confirm_[0].wall_ns / static_cast<std::uint64_t>(std::max(1, (confirm_cycle_ + 1) / 2));
    }
    // What one of its unconfined cycles may use beyond its CPUs (bounded_, kMinBoundedConfirmCycles).
    std::uint64_t confirm_cycle_bound() const noexcept {
        return static_cast<std::uint64_t>(kConfirmCycles / kMinBoundedConfirmCycles) * confirm_cycle_ns();
    }

    Phase phase_ = Phase::idle;
    std::uint64_t since_ = 0;      // the phase began
    std::uint64_t ref_since_ = 0;  // confined: the window began (at its first mark, or with the phase)
    Backoff probe_after_ = probe_interval(kFirstProbeNs);
    Backoff hold_ = hold_time();
    Progress ref_, probe_, compared_ref_;  // the whole confined window, a probe's, the one compared
    RecentProgress recent_;                // the confined window's recent part
    int cpus_ = 0;                         // the most CPUs the job was confined to in that window
    Progress confirm_[2];                  // the confirmation's confined and unconfined cycles, pooled
    Progress confirm_top_[2];              // of each kind, the cycle with the most marks
    std::uint64_t confirm_beyond_ = 0;     // what its unconfined cycles used beyond cpus_ (bounded_)
    int confirm_marked_cycles_ = 0;        // its unconfined cycles that made a mark
    int confirm_cycle_ = 0;                // the confirmation's cycle now
    double last_ratio_ = 0;
    bool held_before_ = false;
    std::uint64_t last_mark_ = 0;  // the confined window's last mark (or its start); kept through its probe
    bool marked_ = false;  // the job made a mark while throttled (a window without any can be a stall)
    // Comparisons in a row that read hand-over bound, since one whose confirmation failed (0:
    // none is being looked at again); a hold counts as all but one. Their windows last look_ns_.
    int looks_ = 0;
    std::uint64_t look_ns_ = kLookMinNs;
    std::uint32_t look_seed_ = 12345;
    bool started_ = false;        // the start is over (once per job)
    // The start: the first cycle end or peek in the construct it runs in now (0: none), and the
    // marks and CPU time since.
    std::uint64_t construct_since_ = 0;
    Progress construct_;
    std::uint64_t construct_skip_cpu_ns_ = 0;  // begun at a peek: its cycle's CPU before it
    bool start_pending_ = false;  // probe_ holds the start's window, not yet compared
    bool first_hold_now_ = false;
    bool probe_ended_ = false;
    bool bounded_ = false;  // APSHIM_CHECK_BOUND (above)
};

}  // namespace apshim
