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

#include "adapters/omp/omp_state.hpp"

namespace apshim::omp_adapter {

// Whether the code at `site` (a fork's return address) lies in a library that needs whole teams.
// dladdr once per call site, then a cached answer (next_fn.hpp: SiteCache); any thread.
bool needs_whole_team(const void* site) noexcept;

using SetDynamic = void (*)(int);

// Both runtimes' fork hooks, at an outermost fork from `site`, before sizing the team: where the
// library at `site` needs whole teams, withholds both permissions (`icvs.dynamic`, `opted_in`)
// and, where dyn-var was on and the caller can turn it back on when the region ends
// (`can_turn_back`), turns the forking thread's off with the runtime's own omp_set_dynamic
// (`set_dynamic`: OmpQueries::set_dynamic, looked up only here). Returns what to call with 1 when
// the region ends, or null where dyn-var was left as it was.
template <typename SetDynamicFn>
SetDynamic keep_whole_team(const void* site, ForkIcvs& icvs, bool& opted_in, SetDynamicFn& set_dynamic,
                           bool can_turn_back) noexcept {
    if (!(icvs.dynamic || opted_in) || !needs_whole_team(site)) return nullptr;
    SetDynamic off = icvs.dynamic && can_turn_back ? set_dynamic.get() : nullptr;
    if (off) off(0);
    opted_in = icvs.dynamic = false;
    return off;
}

// The decision for a file name (the basename of dladdr's dli_fname), exposed for the unit tests.
bool whole_team_library(const char* file) noexcept;

}  // namespace apshim::omp_adapter
