// Before main: make the shim oneTBB's ITT collector, and (only when the user asked for more
// processors than the machine has, APSHIM_P > CPUs) let oneTBB see that many CPUs.
#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "adapters/adapter.hpp"
#include "adapters/tbb/tbb_state.hpp"

namespace {

int real_cpu_count = 0;

__attribute__((constructor(110))) void make_shim_the_itt_collector() {
    if (!apshim::shim_enabled()) return;
    // A user's own collector (VTune, ...) wins; the shim then sees only waits, not tasks.
    if (std::getenv("INTEL_LIBITTNOTIFY64") == nullptr) {
        Dl_info info;
        if (dladdr(reinterpret_cast<void*>(&make_shim_the_itt_collector), &info) && info.dli_fname) {
            setenv("INTEL_LIBITTNOTIFY64", info.dli_fname, 0);
            // Without a group list the loader hooks nothing; "stitch" holds the callee_enter/leave pair.
            setenv("INTEL_ITTNOTIFY_GROUPS", "stitch", 0);
        }
    }
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) real_cpu_count = CPU_COUNT(&set);
}

// oneTBB (misc_ex.cpp) counts CPUs with sysconf(_SC_NPROCESSORS_ONLN) and sched_getaffinity.
// Answer with APSHIM_P for libtbb's calls only, and only when APSHIM_P exceeds the machine.
int fake_cpus(void* caller) {
    int P = apshim::configured_processors();
    if (P <= real_cpu_count || real_cpu_count == 0) return 0;
    Dl_info info;
    if (!dladdr(caller, &info) || !info.dli_fname || !std::strstr(info.dli_fname, "libtbb.so")) return 0;
    return P;
}

}  // namespace

int apshim::tbb_adapter::tbb_default_concurrency() noexcept {
    int P = apshim::configured_processors();
    return P > real_cpu_count ? P : real_cpu_count;
}

// A sanitizer runtime preloaded ahead of the shim (tests/README-sanitizers.md) calls sysconf while
// it initializes, before instrumented code may run: ThreadSanitizer crashed in our function
// entry hook. So these two interposers are not instrumented, resolve the next definition without
// a static-initialization guard, and call nothing else until the constructor above has run.
#define APSHIM_UNINSTRUMENTED __attribute__((no_sanitize("thread", "address", "undefined")))

extern "C" __attribute__((visibility("default"))) APSHIM_UNINSTRUMENTED long sysconf(int name) {
    using Fn = long (*)(int);
    static Fn next = nullptr;
    Fn real = __atomic_load_n(&next, __ATOMIC_ACQUIRE);
    if (!real) __atomic_store_n(&next, real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "sysconf")), __ATOMIC_RELEASE);
    if (real_cpu_count > 0 && (name == _SC_NPROCESSORS_ONLN || name == _SC_NPROCESSORS_CONF)) {
        if (int P = fake_cpus(__builtin_return_address(0))) return P;
    }
    return real(name);
}

extern "C" __attribute__((visibility("default"))) APSHIM_UNINSTRUMENTED int sched_getaffinity(pid_t pid, size_t size,
                                                                                               cpu_set_t* mask) {
    using Fn = int (*)(pid_t, size_t, cpu_set_t*);
    static Fn next = nullptr;
    Fn real = __atomic_load_n(&next, __ATOMIC_ACQUIRE);
    if (!real) __atomic_store_n(&next, real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "sched_getaffinity")), __ATOMIC_RELEASE);
    int P = real_cpu_count > 0 ? fake_cpus(__builtin_return_address(0)) : 0;
    if (P == 0) return real(pid, size, mask);
    if (static_cast<size_t>(P) > size * 8) {
        errno = EINVAL;  // TBB doubles its mask and asks again
        return -1;
    }
    std::memset(mask, 0, size);
    for (int i = 0; i < P; ++i) CPU_SET_S(i, size, mask);
    return 0;
}
