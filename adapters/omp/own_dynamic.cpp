// Where the program allowed dynamic adjustment (OMP_DYNAMIC=true, omp_set_dynamic(1)), the team
// sizes are the shim's: the allotment (omp_state.hpp: team_size). Each runtime also applies a rule
// of its own after the shim's, and both read load that the table already accounts for:
//  - libgomp gives a region at most "CPUs of the forking thread's mask minus the 15-minute load
//    average" threads. The load average remembers past load for a quarter of an hour: after a
//    build or a benchmark on the 2-core VM (load 1.9), scikit-learn alone got teams of one,
//    natively and under the shim at allotment 2 (2.3-2.4 s a fit against 1.5 s with teams of
//    two). On a machine whose co-runners are under the shim, their load is what DP divided, so
//    counting it again only shrinks every job twice.
//  - libomp's default ("load balance") counts every running thread on the machine through /proc:
//    a co-running job's surplus threads, confined to its own CPUs and runnable there, read as
//    load on the whole machine and cut this job's teams below its allotment.
// So libgomp's getloadavg() call is answered with no load (the program's own calls, and every
// call once the shim released libgomp, go to libc), and libomp runs in its "thread limit" mode,
// which counts only its own threads, unless the user chose KMP_DYNAMIC_MODE. The CPUs the job runs
// on still count: libgomp caps a team at the forking thread's mask, which confinement sets. Load
// no table sees (a program outside the shim) is the width check's (shim/width_check.hpp), which
// narrows the job's CPUs and with them its teams.
#include "adapters/common/next_fn.hpp"
#include "adapters/omp/omp_adapter.hpp"

namespace apshim::omp_adapter {
namespace {

__attribute__((constructor(110))) void defer_libomp_dynamic() {
    if (!host().enabled() || host().env_chosen_by_user("KMP_DYNAMIC_MODE")) return;
    host().env_default("KMP_DYNAMIC_MODE", "thread_limit");
}

NextFn<int (*)(double*, int)> next_getloadavg{"getloadavg"};
APSHIM_RESOLVE_AT_LOAD(next_getloadavg)

// The cache's owner key for these answers (cached_site_answer).
const char kOwner = 0;

// Whether the code at `site` lies in a libgomp (any copy: the object itself defines
// GOMP_parallel, not one of its dependencies). dladdr and dlsym once per call site.
bool in_libgomp(const void* site) noexcept {
    return cached_site_answer(site, &kOwner, [](const void* at) -> unsigned {
               return object_defines(at, "GOMP_parallel");
           }) != 0;
}

// A getloadavg() call from `site` asks for libgomp's dynamic adjustment while the shim sizes its
// teams (not disabled, libgomp not released).
bool answers_no_load(const void* site) noexcept {
    return site && host().enabled() && g_gomp_state.limit.load(std::memory_order_relaxed) != kReleased &&
           in_libgomp(site);
}

}  // namespace
}  // namespace apshim::omp_adapter

// getloadavg, interposed for libgomp's dynamic adjustment only (above); libgomp asks for three
// values and reads the last. Everyone else gets libc's answer.
extern "C" __attribute__((visibility("default"))) int getloadavg(double loadavg[], int nelem) {
    using namespace apshim::omp_adapter;
    if (nelem >= 0 && answers_no_load(__builtin_return_address(0))) {
        int n = nelem < 3 ? nelem : 3;
        for (int i = 0; i < n; ++i) loadavg[i] = 0.0;
        return n;
    }
    auto real = next_getloadavg.get();
    return real ? real(loadavg, nelem) : -1;
}
