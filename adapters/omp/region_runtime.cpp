// Controller side of the OpenMP adapters, and the team-size rule.
#include "adapters/omp/region_runtime.hpp"

#include <dlfcn.h>

#include <algorithm>

namespace apshim::omp_adapter {

Sample RegionRuntime::sample() { return sampler_.sample(state_.slots, state_.limit.load()); }

void RegionRuntime::after_fork_child() {
    state_.slots.reset_after_fork();
    state_.fork_generation.fetch_add(1);
    state_.seen.store(false);
    state_.limit.store(0);
    sampler_.reset();
}

void* symbol_beside(void* defined, const char* name) noexcept {
    Dl_info info;
    if (!defined || !dladdr(defined, &info) || !info.dli_fname) return nullptr;
    void* lib = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    return lib ? dlsym(lib, name) : nullptr;
}

int team_size(State& s, int requested) noexcept {
    int limit = s.limit.load(std::memory_order_relaxed);
    if (limit <= 0) return requested;  // not throttling: the program's request, untouched
    int bound = requested > 0 ? requested : user_thread_setting();
    if (bound <= 0) bound = configured_processors() > 0 ? configured_processors() : limit;
    return std::min(bound, limit);
}

}  // namespace apshim::omp_adapter
