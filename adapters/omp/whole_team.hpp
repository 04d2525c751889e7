// Regions that need every thread they asked for, whatever the program allowed.
//
// OMP_DYNAMIC=true (or omp_set_dynamic(1)) lets the runtime, and so the shim, give a region fewer
// threads than it asked for, and a program that set it should cope. A library inside it may not:
// Debian's OpenMP build of OpenBLAS (libopenblas0-openmp, under NumPy, SciPy, Octave) splits each
// call into omp_get_max_threads() pieces that wait for each other in sched_yield loops, and a team
// smaller than that waits for ever: SciPy under the shim with OMP_DYNAMIC=true at allotment 1, and
// natively under load once libgomp's own dynamic adjustment (the load average) gave it one thread,
// was still waiting after 11 minutes (docs/enforcement.md, thirty-fifth and thirty-sixth
// sessions). A team of the size asked for is always allowed, so an outermost region forked from
// such a library keeps it: the shim does not shrink it, and for libgomp the forking thread's
// dyn-var is off for that one region, so that libgomp's load-average rule does not shrink it
// either (the allotment is still enforced by confinement). Known today: OpenBLAS, by its file name.
#pragma once

namespace apshim::omp_adapter {

// Whether the code at `site` (a fork's return address) lies in a library that needs whole teams.
// dladdr once per call site, then a cached answer (next_fn.hpp: SiteCache); any thread.
bool needs_whole_team(const void* site) noexcept;

// The decision for a file name (the basename of dladdr's dli_fname), exposed for the unit tests.
bool whole_team_library(const char* file) noexcept;

}  // namespace apshim::omp_adapter
