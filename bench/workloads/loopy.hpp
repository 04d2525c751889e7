// loopy: shared by loopy_tbb.cpp and loopy_omp.cpp. Sen §4.2 LOOPY: one serial loop in the main
// thread spawns n equal independent tasks of `work` busy units each, then waits for all.
// T1 = n * work units; T_inf ~ n spawn steps + work units.
#pragma once

#include <cstdint>
#include <vector>

#include "common.hpp"

inline constexpr long kLoopyN = 200, kLoopyWork = 10000;  // T1 ~ 2 s

inline std::uint64_t loopy_task(long i, long work) { return wl::busy_units(wl::mix(static_cast<std::uint64_t>(i)), work); }

inline unsigned long long loopy_checksum(const std::vector<std::uint64_t>& out) {
    unsigned long long sum = 0;
    for (auto v : out) sum += v % 1000003;
    return sum;
}
