// pfor: shared by pfor_tbb.cpp and pfor_omp.cpp. A parallel-for kernel over n doubles repeated
// reps times: each element does a short chain of sqrt/mul/add (a few dozen flops) and elements
// are independent, so the result does not depend on the schedule or the thread count.
// T1 ~ n * reps element updates; T_inf ~ reps loops one after another (each a fork-join of
// depth log(n / chunk) plus one chunk of kPforChunk elements).
#pragma once

#include <cmath>
#include <vector>

inline constexpr long kPforN = 2000000, kPforReps = 50;
inline constexpr long kPforChunk = 4096;  // OpenMP schedule(dynamic, chunk); oneTBB grain size

inline void pfor_element(std::vector<double>& x, std::vector<double>& y, long i, long rep) {
    double v = y[static_cast<std::size_t>(i)] + 0.5 * static_cast<double>(i % 1000) + static_cast<double>(rep);
    for (int k = 0; k < 8; ++k) v = std::sqrt(v * v + 1.0) * 0.999;
    x[static_cast<std::size_t>(i)] = v;
    y[static_cast<std::size_t>(i)] = v * 0.001;
}

inline unsigned long long pfor_checksum(const std::vector<double>& x) {
    double s = 0;
    for (double v : x) s += v;
    return static_cast<unsigned long long>(s * 1000.0);
}
