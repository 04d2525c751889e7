// knary: shared by knary_tbb.cpp and knary_omp.cpp. Blumofe's knary(n,k,r) as described in Sen's
// thesis (§7, "Cilk Applications"): a tree of depth n and branching factor k; at every node the
// program first does a fixed amount of busy work (`units` busy units, default 5 ~ 5 us; Cilk's
// version does "100 iterations of a small amount of work"), then, if n > 1, runs its k children:
// the first r one after another (Cilk: `spawn knary(n-1,k,r); if (i < r) sync;`), then the
// remaining k-r in parallel, then waits for them. Leaves are depth 1.
//   nodes N = (k^n - 1)/(k - 1)  (n if k = 1)       T1 = N * units
//   s = min(r,k) + (r < k ? 1 : 0)                  T_inf = units * (s^n - 1)/(s - 1)  (n*units if s = 1)
// The checksum is the wrapping sum over all nodes of (their busy-work result mod 1000003); a
// node's seed is a hash of its path from the root, so it does not depend on the schedule.
#pragma once

#include <cstdint>
#include <string>

#include "common.hpp"

inline constexpr long kKnaryN = 10, kKnaryK = 4, kKnaryR = 1, kKnaryUnits = 5;  // T1 ~ 1.75 s
inline constexpr long kKnaryMaxK = 64;

struct KnaryArgs {
    long n, k, r, units;
};

inline KnaryArgs knary_args(const wl::Args& a) {
    KnaryArgs ka{wl::arg(a, 0, kKnaryN), wl::arg(a, 1, kKnaryK), wl::arg(a, 2, kKnaryR), wl::arg(a, 3, kKnaryUnits)};
    if (ka.n < 1 || ka.k < 1 || ka.k > kKnaryMaxK || ka.r < 0 || ka.units < 0)
        wl::die("knary", "need n >= 1, 1 <= k <= " + std::to_string(kKnaryMaxK) + ", r >= 0, units >= 0");
    if (ka.r > ka.k) ka.r = ka.k;
    return ka;
}

inline std::uint64_t knary_node_work(std::uint64_t id, long units) { return wl::busy_units(id, units) % 1000003; }
inline std::uint64_t knary_child(std::uint64_t id, long i) { return wl::mix(id * 0x100000001b3ULL + static_cast<std::uint64_t>(i) + 1); }
inline constexpr std::uint64_t kKnaryRoot = 1;

inline std::uint64_t knary_serial(long n, const KnaryArgs& ka, std::uint64_t id) {
    std::uint64_t v = knary_node_work(id, ka.units);
    if (n <= 1) return v;
    for (long i = 0; i < ka.k; ++i) v += knary_serial(n - 1, ka, knary_child(id, i));
    return v;
}
