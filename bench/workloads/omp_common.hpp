// OpenMP side of every workload: the optional --threads baseline. Without --threads the program
// uses the runtime's default team size (OMP_NUM_THREADS or all cores), as an unmodified program would.
#pragma once

#include <omp.h>

#include "common.hpp"

namespace wl {

inline void omp_limit(const Args& a) {
    if (a.threads > 0 && !a.serial) omp_set_num_threads(a.threads);
}

}  // namespace wl
