// phases: shared by phases_tbb.cpp and phases_omp.cpp. Sen's experiment P2 profile: each
// repetition is a serial phase (busy work on the main thread, parallelism 1) followed by a
// parallel phase with ample parallelism; --reverse runs the parallel phase first.
//   phases s p reps            serial phase = s ms of busy work (s*1000 units);
//                              parallel phase = p ms of work in total (T1), as p tasks of 1 ms
//                              (1000 units) each, i.e. ~p/P ms on P cores.
//   phases su tasks tu reps    (four numbers, the older form) serial phase = su units,
//                              parallel phase = `tasks` tasks of tu units each.
// T1 = reps * (s + p) ms;  T_inf ~ reps * (s + 1) ms.
#pragma once

#include <cstdint>
#include <vector>

#include "common.hpp"

struct PhasesArgs {
    long serial_units, tasks, task_units, reps;
    std::vector<long> echo;  // what the output line shows: the form the user gave
};

inline constexpr long kPhasesSerialMs = 250, kPhasesParallelMs = 1000, kPhasesReps = 2;  // T1 ~ 2.5 s

inline PhasesArgs phases_args(const wl::Args& a) {
    PhasesArgs pa{};
    if (a.positional.size() >= 4) {
        pa = {wl::arg(a, 0, 0), wl::arg(a, 1, 0), wl::arg(a, 2, 0), wl::arg(a, 3, 0), {}};
        pa.echo = {pa.serial_units, pa.tasks, pa.task_units, pa.reps};
    } else {
        long s = wl::arg(a, 0, kPhasesSerialMs), p = wl::arg(a, 1, kPhasesParallelMs), reps = wl::arg(a, 2, kPhasesReps);
        pa = {s * 1000, p, 1000, reps, {s, p, reps}};
    }
    if (pa.serial_units < 0 || pa.tasks < 0 || pa.task_units < 0 || pa.reps < 0) wl::die("phases", "arguments must be >= 0");
    return pa;
}

inline std::uint64_t phases_task(long rep, long i, long units) {
    return wl::busy_units(wl::mix((static_cast<std::uint64_t>(rep) << 32) + static_cast<std::uint64_t>(i)), units) % 1000003;
}

// Runs the phases; parallel(out, rep) must fill out[i] = phases_task(rep, i, task_units) for all i.
template <class Parallel>
unsigned long long phases_run(const PhasesArgs& pa, bool reverse, Parallel&& parallel) {
    std::vector<std::uint64_t> out(static_cast<std::size_t>(pa.tasks));
    unsigned long long sum = 0;
    for (long r = 0; r < pa.reps; ++r) {
        for (int phase = 0; phase < 2; ++phase) {
            if ((phase == 0) != reverse) {
                sum += wl::busy_units(wl::mix(~static_cast<std::uint64_t>(r)), pa.serial_units) % 1000003;
            } else {
                parallel(out, r);
                for (auto v : out) sum += v;
            }
        }
    }
    return sum;
}
