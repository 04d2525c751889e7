// Timestamps for hooks. CLOCK_MONOTONIC through the vDSO costs ~25 ns here; that is fine per
// region or chunk. Per-task paths that need less should batch, not switch clocks.
#pragma once

#include <time.h>

#include <cstdint>

namespace apshim {

inline std::uint64_t now_ns() noexcept {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

}  // namespace apshim
