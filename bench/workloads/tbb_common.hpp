// oneTBB side of every workload: the optional --threads baseline. Without --threads the
// program uses oneTBB's default (all cores), as an unmodified program would.
#pragma once

#include <oneapi/tbb/global_control.h>

#include <memory>

#include "common.hpp"

namespace wl {

inline std::unique_ptr<tbb::global_control> tbb_limit(const Args& a) {
    if (a.threads <= 0 || a.serial) return nullptr;
    return std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism,
                                                 static_cast<std::size_t>(a.threads));
}

}  // namespace wl
