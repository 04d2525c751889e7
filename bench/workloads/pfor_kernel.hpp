// The per-element work of pfor: a few dozen flops per element, independent elements, so the
// result does not depend on the schedule or the thread count.
#pragma once

#include <cmath>
#include <vector>

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
