// What the process is told about its CPUs, and what it tells the kernel about them:
//  - sysconf(_SC_NPROCESSORS_*) and sched_getaffinity: libtbb is shown APSHIM_P CPUs when that
//    exceeds the machine (adapters/tbb/tbb_env.cpp decides);
//  - sched_getaffinity and pthread_getaffinity_np answer with the process's original mask while
//    the shim confines its threads (confine.hpp): a runtime or a program that sizes itself from
//    its mask (libgomp, oneTBB, OpenBLAS, Python's os.sched_getaffinity) must not be narrowed by
//    the shim's enforcement, which moves with every allotment. So does libc's syscall() for
//    SYS_sched_getaffinity, which libomp uses: it reads its mask at its middle initialisation, and
//    a libomp first used while the process was confined (loaded by a Python module after libgomp's
//    regions started the controller) sized every default team from one CPU, for good;
//  - sched_setaffinity and pthread_setaffinity_np: the program binds threads itself; where it keeps
//    a narrower mask the shim stops confining for good (and leaves the threads it bound alone); a
//    mask it takes back (hwloc's topology discovery) is no binding (confine.hpp, ProgramSetsMask).
//    So does libc's syscall() for SYS_sched_setaffinity, libomp's route.
// A sanitizer runtime preloaded ahead of the shim (tests/README-sanitizers.md) calls sysconf while
// it initializes, before instrumented code may run: ThreadSanitizer crashed in our function entry
// hook. So these interposers are not instrumented, resolve the next definition without a
// static-initialization guard, and call nothing else until the shim's constructors have run.
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "adapters/tbb/tbb_state.hpp"
#include "shim/confine.hpp"

#define APSHIM_UNINSTRUMENTED __attribute__((no_sanitize("thread", "address", "undefined")))

namespace {

template <typename Fn>
APSHIM_UNINSTRUMENTED Fn next(Fn& cache, const char* name) {
    Fn real = __atomic_load_n(&cache, __ATOMIC_ACQUIRE);
    if (!real) __atomic_store_n(&cache, real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name)), __ATOMIC_RELEASE);
    return real;
}

// `pid` is this process or one of its threads (0 is the caller).
APSHIM_UNINSTRUMENTED bool ours(pid_t pid) {
    if (pid == 0 || pid == getpid()) return true;
    char path[48];
    std::snprintf(path, sizeof path, "/proc/self/task/%d", static_cast<int>(pid));
    return access(path, F_OK) == 0;
}

// What the interposers alter, and when. Once the program bound a thread itself, its own masks
// are the truth: no original mask shown, no CPUs made up for oneTBB (oneTBB's
// test_hw_concurrency binds to half the CPUs, then max_concurrency() must say so).
APSHIM_UNINSTRUMENTED bool original_masks_shown() {
    return apshim::confine::active() && !apshim::confine::program_bound();
}
APSHIM_UNINSTRUMENTED int cpus_for_tbb(void* caller) {
    return apshim::confine::program_bound() ? 0 : apshim::tbb_adapter::cpus_shown_to(caller);
}

// The original mask into a caller's buffer of `size` bytes, as the kernel would fill it (its CPUs
// the cpuset allows now).
APSHIM_UNINSTRUMENTED void show_original(size_t size, cpu_set_t* mask) {
    std::memset(mask, 0, size);
    std::memcpy(mask, &apshim::confine::allowed(), size < sizeof(cpu_set_t) ? size : sizeof(cpu_set_t));
}

// The thread a sched_setaffinity-style `pid` names: 0 is the caller.
APSHIM_UNINSTRUMENTED pid_t thread_named(pid_t pid) { return pid == 0 ? static_cast<pid_t>(syscall(SYS_gettid)) : pid; }

// The program sets the mask of its thread `tid` (0: one that cannot be named) through `set`, which
// returns 0 on success: recorded for confinement (confine.hpp, ProgramSetsMask), whatever the route.
// Before the shim's constructor, the first such change is libgomp's binding of the initial thread
// (confine.hpp: capture_before_binding): the process's mask is read before it happens.
template <class Set>
APSHIM_UNINSTRUMENTED auto program_sets_mask(pid_t tid, size_t size, const cpu_set_t* mask, Set set) {
    apshim::confine::capture_before_binding();
    apshim::confine::ProgramSetsMask record;
    auto rc = set();
    if (rc == 0) record.done(tid, size, mask);
    return rc;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) APSHIM_UNINSTRUMENTED long sysconf(int name) {
    using Fn = long (*)(int);
    static Fn cache = nullptr;
    Fn real = next(cache, "sysconf");
    if (name == _SC_NPROCESSORS_ONLN || name == _SC_NPROCESSORS_CONF)
        if (int P = cpus_for_tbb(__builtin_return_address(0))) return P;
    return real(name);
}

extern "C" __attribute__((visibility("default"))) APSHIM_UNINSTRUMENTED int sched_getaffinity(pid_t pid, size_t size,
                                                                                               cpu_set_t* mask) {
    using Fn = int (*)(pid_t, size_t, cpu_set_t*);
    static Fn cache = nullptr;
    Fn real = next(cache, "sched_getaffinity");
    if (int P = cpus_for_tbb(__builtin_return_address(0))) {
        if (static_cast<size_t>(P) > size * 8) {
            errno = EINVAL;  // TBB doubles its mask and asks again
            return -1;
        }
        std::memset(mask, 0, size);
        for (int i = 0; i < P; ++i) CPU_SET_S(i, size, mask);
        return 0;
    }
    int rc = real(pid, size, mask);
    if (rc == 0 && original_masks_shown() && ours(pid)) show_original(size, mask);
    return rc;
}

extern "C" __attribute__((visibility("default"))) APSHIM_UNINSTRUMENTED int pthread_getaffinity_np(pthread_t thread,
                                                                                                    size_t size,
                                                                                                    cpu_set_t* mask) {
    using Fn = int (*)(pthread_t, size_t, cpu_set_t*);
    static Fn cache = nullptr;
    Fn real = next(cache, "pthread_getaffinity_np");
    int rc = real(thread, size, mask);
    if (rc == 0 && original_masks_shown()) show_original(size, mask);
    return rc;
}

extern "C" __attribute__((visibility("default"))) APSHIM_UNINSTRUMENTED int sched_setaffinity(pid_t pid, size_t size,
                                                                                               const cpu_set_t* mask) {
    using Fn = int (*)(pid_t, size_t, const cpu_set_t*);
    static Fn cache = nullptr;
    Fn real = next(cache, "sched_setaffinity");
    if (!ours(pid)) return real(pid, size, mask);
    return program_sets_mask(thread_named(pid), size, mask, [&] { return real(pid, size, mask); });
}

extern "C" __attribute__((visibility("default"))) APSHIM_UNINSTRUMENTED int pthread_setaffinity_np(pthread_t thread,
                                                                                                    size_t size,
                                                                                                    const cpu_set_t* mask) {
    using Fn = int (*)(pthread_t, size_t, const cpu_set_t*);
    static Fn cache = nullptr;
    Fn real = next(cache, "pthread_setaffinity_np");
    // Another thread than the caller cannot be named here: 0.
    const pid_t tid = pthread_equal(thread, pthread_self()) ? thread_named(0) : 0;
    return program_sets_mask(tid, size, mask, [&] { return real(thread, size, mask); });
}

// libc's syscall(2) wrapper, variadic: the six arguments any system call takes are passed on as
// they came (an argument the caller did not pass is read as whatever its register or stack slot
// holds, which the kernel ignores for a call that takes fewer: glibc's own wrapper does the same).
// Only SYS_sched_getaffinity is answered differently: as sched_getaffinity above, on the bytes the
// kernel wrote (its return value; the raw call returns their count, not 0). SYS_sched_setaffinity
// on the process's threads is recorded as sched_setaffinity's: libomp binds its threads through
// here (KMP_AFFINITY, kmp_set_affinity), and a binding found only in the threads' masks afterwards
// may lose the one thread pinned to the job's own CPU (confine.hpp).
// The shim's own reads of the threads' masks need the kernel's answer: confine.cpp calls libc's
// syscall() past this one.
extern "C" __attribute__((visibility("default"))) APSHIM_UNINSTRUMENTED long syscall(long number, ...) {
    using Fn = long (*)(long, ...);
    static Fn cache = nullptr;
    Fn real = next(cache, "syscall");
    va_list ap;
    va_start(ap, number);
    long a[6];
    for (long& x : a) x = va_arg(ap, long);
    va_end(ap);
    if (number == SYS_sched_setaffinity && ours(static_cast<pid_t>(a[0])))  // as sched_setaffinity
        return program_sets_mask(thread_named(static_cast<pid_t>(a[0])), static_cast<size_t>(a[1]), reinterpret_cast<const cpu_set_t*>(a[2]),
                                 [&] { return real(number, a[0], a[1], a[2], a[3], a[4], a[5]); });
    long rc = real(number, a[0], a[1], a[2], a[3], a[4], a[5]);
    if (number == SYS_sched_getaffinity && rc > 0 && original_masks_shown() && ours(static_cast<pid_t>(a[0])))
        show_original(static_cast<size_t>(rc), reinterpret_cast<cpu_set_t*>(a[2]));
    return rc;
}
