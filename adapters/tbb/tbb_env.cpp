// Before main: make the shim oneTBB's ITT collector, and (only when the user asked for more
// processors than the machine has, APSHIM_P > CPUs) let oneTBB see that many CPUs.
#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

#include "adapters/adapter.hpp"
#include "adapters/tbb/tbb_state.hpp"

namespace {

int real_cpu_count = 0;
// The most CPUs libtbb was told it has (0: none faked). oneTBB sizes its default concurrency once,
// from its first count, often before the process joins the table: APSHIM_P=8 shown then, and a
// table created with P = 2 found at the join (APSHIM_P is ignored there), leave oneTBB at 8
// while the shim's P is 2 from then on.
std::atomic<int> shown_cpus{0};

__attribute__((constructor(110))) void make_shim_the_itt_collector() {
    if (!apshim::host().enabled()) return;
    // A user's own collector (VTune, ...) wins; the shim then sees only waits, not tasks.
    if (!apshim::host().env_chosen_by_user("INTEL_LIBITTNOTIFY64")) {
        Dl_info info;
        // The loader then calls the shim's __itt_api_init (task_hooks.cpp), which decides what
        // TBB gets: the task hooks, or nothing (no collector, TBB's native code paths).
        if (dladdr(reinterpret_cast<void*>(&make_shim_the_itt_collector), &info) && info.dli_fname)
            apshim::host().env_default("INTEL_LIBITTNOTIFY64", info.dli_fname);
    }
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) real_cpu_count = CPU_COUNT(&set);
}

// oneTBB (misc_ex.cpp) counts CPUs with sysconf(_SC_NPROCESSORS_ONLN) and sched_getaffinity.
// Answer with P (host().processors(): APSHIM_P, the table's P once joined) for libtbb's calls only, and
// only when P exceeds the machine.
int fake_cpus(void* caller) {
    int P = apshim::host().processors();
    if (P <= real_cpu_count || real_cpu_count == 0) return 0;
    Dl_info info;
    if (!dladdr(caller, &info) || !info.dli_fname || !std::strstr(info.dli_fname, "libtbb.so")) return 0;
    int shown = shown_cpus.load(std::memory_order_relaxed);
    while (shown < P && !shown_cpus.compare_exchange_weak(shown, P, std::memory_order_relaxed)) {
    }
    return P;
}

}  // namespace

// What oneTBB's own default is: what it was shown, when the shim showed it more CPUs than the
// machine's (the cap's ceiling, and what the stall valve lifts it to: PrusaSlicer's tasks wait for
// each other until that many run; lifted to the table's P = 2 only, they waited for ever).
int apshim::tbb_adapter::tbb_default_concurrency() noexcept {
    return std::max({apshim::host().processors(), real_cpu_count, shown_cpus.load(std::memory_order_relaxed)});
}

// Called by the shim's sysconf/sched_getaffinity interposers (shim/cpu_hooks.cpp), which may run
// before any constructor: answers 0 until the constructor above has run.
int apshim::tbb_adapter::cpus_shown_to(void* caller) noexcept {
    return real_cpu_count > 0 ? fake_cpus(caller) : 0;
}
