// APSHIM_TRACE: one CSV row per est_cycle, written by the controller thread only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

namespace apshim {

// The columns, precisely (shim/README.md says the same for users):
//   time_ms          end of the cycle, since the controller started
//   desire           the estimator's desire d published this cycle
//   allotment        DP's answer a (the processors the job may use from now on)
//   usage            threads allowed to execute work during the cycle that did (p, <= the limit)
//   inefficiency     r = 1 - busy / usage, clamped to [0, 1]
//   busy             wall time inside user work, summed over threads, per wall second: can exceed
//                    cpus when confined threads time-share the job's CPUs (it counts a task
//                    descheduled in mid-body as busy)
//   cpus             CPUs the job's threads are confined to at the end of the cycle, 0 = not
//                    confined (alone on the whole mask, or confinement off)
//   threads_running  the process's threads running or runnable now (state R in /proc), the
//                    controller not counted: what the kernel sees, at most cpus of them actually
//                    on a CPU when confined; -1 in the rows between two readings where the process
//                    has more than kStatesPerRow threads (read every threads / kStatesPerRow rows)
//   measure          how busy was measured: "timed" (the hooks timed every task: the job was
//                    throttled), "clocks" (the threads' CPU clocks, the hooks untimed), or
//                    "none" (no runtime measured: none started yet, or libomp without OMPT)
//   confine_check    what the confinement check (shim/confine_check.hpp) made of the cycle: "-"
//                    (nothing checked: nothing to confine, or confinement or the check is off),
//                    "start" (the first 100 ms the job could be confined: run as in a probe), "confined",
//                    "probe" (unconfined for a moment to compare the job's progress), "confirm"
//                    (a probe or the start read hand-over bound: 16 cycles confined and unconfined
//                    in turn, compared pooled), "handover" (found hand-over bound and
//                    confirmed: not confined for now)
//   marks            the job's progress marks in the cycle (Sample::marks: tasks made and run,
//                    chunks fetched, ordered turns, barriers and taskwaits entered; counted by
//                    the OpenMP hooks while timed, 0 otherwise): what the confinement check
//                    compares; the idle and width checks count region_ends too
//   idle_check       what the idle check (shim/idle_check.hpp) made of the cycle: "-" (nothing
//                    checked: no idle processors, no marks, or a confinement check's start,
//                    probe or hold), "idle" (the job uses the idle processors too), "probe"
//                    (kept off them for a moment to compare), "declined" (they did not make it
//                    faster: kept to its own processors for now)
//   region_ends      OpenMP threads' arrivals at their regions' end barriers in the cycle, timed
//                    or not (Sample::region_ends): progress for the idle and width checks only
//   width_check      what the width check (shim/width_check.hpp) made of the cycle: "-" (nothing
//                    checked: one processor, no marks, idle processors, a confinement check's
//                    start, probe or hold), "wide" (on all its processors), "probe" (on half of
//                    them for a moment to compare),
//                    "narrowed" (faster on half: asks for no more than half for now)
//   cpu_ms           the process's CPU time in the cycle, every thread's (the controller's too),
//                    in ms: what busy is in wall time, in CPU time; what a start or a probe took
//                    beyond one CPU's worth is what it cost the co-runners
struct TraceRow {
    double time_ms;
    int desire, allotment, usage;
    double inefficiency;
    double busy;
    int cpus;
    int threads_running;
    const char* measure;
    const char* confine_check;
    std::uint64_t marks;
    const char* idle_check;
    std::uint64_t region_ends;
    const char* width_check;
    double cpu_ms;
};

// Threads of this process in state R (running or runnable), from /proc/self/task: for the trace
// only (it reads a file per thread).
// At most this many threads' states are read for a row's threads_running (threads_running()).
constexpr std::size_t kStatesPerRow = 64;
int threads_running() noexcept;

class Trace {
public:
    // "%p" in `path_pattern` becomes the pid. Returns false (and says why once) on failure.
    bool open(const std::string& path_pattern);
    void write(const TraceRow& row);
    void close();
    // After fork in the child: forget the parent's file without flushing its buffer.
    void abandon();
    bool is_open() const { return file_ != nullptr; }

private:
    std::FILE* file_ = nullptr;
};

}  // namespace apshim
