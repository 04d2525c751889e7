#include "shim/confine.hpp"

#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <tuple>
#include <utility>
#include <vector>

#include "adapters/common/clock.hpp"
#include "gat/proc.hpp"

namespace apshim::confine {
namespace {

// Raw system calls only, through libc's syscall() itself: the libc names are interposed by this
// very library (cpu_hooks.cpp), syscall() too, our own calls must not look like the program
// binding its threads, and a read must give the kernel's mask, not the original one shown to the
// program. Resolved at load (capture_at_load), so that the calls stay async-signal-safe.
using SyscallFn = long (*)(long, ...);
std::atomic<SyscallFn> g_kernel_syscall{nullptr};
SyscallFn kernel_syscall_fn() noexcept {
    SyscallFn fn = g_kernel_syscall.load(std::memory_order_acquire);
    if (!fn) {
        fn = reinterpret_cast<SyscallFn>(dlsym(RTLD_NEXT, "syscall"));
        if (!fn) fn = &syscall;
        g_kernel_syscall.store(fn, std::memory_order_release);
    }
    return fn;
}
long kernel_syscall(long number, long a, long b, const void* c) noexcept {
    return kernel_syscall_fn()(number, a, b, c);
}
int set_mask(pid_t tid, const cpu_set_t& m) noexcept {
    return kernel_syscall(SYS_sched_setaffinity, tid, sizeof m, &m) == 0 ? 0 : errno;
}
bool get_mask(pid_t tid, cpu_set_t& m) noexcept {
    CPU_ZERO(&m);
    return kernel_syscall(SYS_sched_getaffinity, tid, sizeof m, &m) > 0;
}
// A mask of every CPU: the kernel keeps of it the CPUs the process's cpuset allows.
cpu_set_t every_cpu() noexcept {
    cpu_set_t all;
    CPU_ZERO(&all);
    for (int c = 0; c < CPU_SETSIZE; ++c) CPU_SET(c, &all);
    return all;
}

cpu_set_t g_original;
// What a thread goes back to when we let go of it: the original mask, or, where the process was
// started on every CPU its cpuset allows (no taskset, no numactl), every CPU. The kernel cuts that
// to the cpuset and keeps the mask asked for: threads asking for the original would never run on
// CPUs the cpuset gains later (a container's shared pool growing), where natively a process that
// never set a mask does. Set once, by the controller at its start (reset_thread_mask), before it
// confines any thread.
cpu_set_t g_home;
// A mask the controller publishes for program threads to read without a lock: it writes the
// spare buffer, then flips the index. Constant-initialized (constinit below): capture_at_load
// publishes from the preload constructor, which may run before this file's dynamic initializers
// would, and one would then reset the index to an empty buffer.
class PublishedMask {
public:
    void publish(const cpu_set_t& m) noexcept {
        const int spare = 1 - index_.load(std::memory_order_relaxed);
        masks_[spare] = m;
        index_.store(spare, std::memory_order_release);
    }
    const cpu_set_t& read() const noexcept { return masks_[index_.load(std::memory_order_acquire)]; }

private:
    cpu_set_t masks_[2]{};
    std::atomic<int> index_{0};
};
// The CPUs of the original mask the process may use now: all of them until its cpuset shrinks
// (a container's CPUs changed, Kubernetes' CPU manager moving a pool), read back by apply() from
// the controller's own mask, which is the original or wider (reset_thread_mask) and which the
// kernel cuts to the cpuset. Index i of the table maps into these (g_cpu_order), and a mask that
// covers them binds nothing. Written by the controller under g_apply_mutex, published for the
// interposers (allowed()), which show it as the kernel would.
cpu_set_t g_allowed;
constinit PublishedMask g_allowed_shown;
bool g_captured = false;
// Atomic: the hooks ask from the program's threads (Host::confinement_possible, libomp's yield
// between tasks) while the controller may set it (the program binds a thread).
std::atomic<const char*> g_why_off{nullptr};
constexpr const char* kProgramBinds = "the program sets CPU affinity itself";
// Why the environment asks each kind of OpenMP runtime to bind threads (capture_at_load), or null.
// Set before any other thread exists. The two read the variables differently (measured with
// libgomp 12 and libomp 14: docs/enforcement.md, "eighty-second session"): libgomp ignores
// KMP_AFFINITY, and OMP_PROC_BIND=false turns its OMP_PLACES and GOMP_CPU_AFFINITY off; in
// libomp a KMP_AFFINITY decides alone, GOMP_CPU_AFFINITY overrides OMP_PROC_BIND, and OMP_PLACES
// binds even under OMP_PROC_BIND=false.
const char* g_gnu_binding = nullptr;   // libgomp
const char* g_llvm_binding = nullptr;  // libomp, Intel's libiomp5
// The reason of a runtime that binds for the environment and is loaded in the process now
// (libgomp, libomp, libiomp5, copies that Python wheels vendor under hashed names), wherever it was
// loaded (a plugin's RTLD_LOCAL too); null when none is. Known by its file's name, with
// dl_iterate_phdr, which takes no lock a library's constructor holds: bound_reason runs under
// g_apply_mutex, which the program's own binding takes (ProgramSetsMask), and a runtime that a
// plugin loads binds its initial thread in its constructor, under the loader's lock, which a
// lookup by symbol (dlopen) would wait for. A copy renamed outright is missed: its binding then
// reads as the program's own (kProgramBinds), which stops confinement as well.
int binding_runtime(dl_phdr_info* info, size_t, void* reason) {
    const char* name = info->dlpi_name ? std::strrchr(info->dlpi_name, '/') : nullptr;
    name = name ? name + 1 : info->dlpi_name;
    if (!name) return 0;
    const char* why = nullptr;
    if (std::strncmp(name, "libgomp", 7) == 0) why = g_gnu_binding;
    if (std::strncmp(name, "libomp", 6) == 0 || std::strncmp(name, "libiomp", 7) == 0) why = g_llvm_binding;
    *static_cast<const char**>(reason) = why;
    return why != nullptr;
}
const char* loaded_runtime_binding() noexcept {
    const char* why = nullptr;
    if (!g_gnu_binding && !g_llvm_binding) return nullptr;
    dl_iterate_phdr(&binding_runtime, &why);
    return why;
}
// Why confinement stops where the program's threads keep masks of their own: the binding the user
// asked a loaded OpenMP runtime for, else the program's own.
const char* bound_reason() noexcept {
    const char* why = loaded_runtime_binding();
    return why ? why : kProgramBinds;
}
bool g_off_by_fault = false;
// Why confinement is off where /proc/self/task cannot be read (check_system, apply).
constexpr const char* kNoThreadList = "the process's threads cannot be listed (/proc/self/task: no /proc mounted?)";
std::atomic<bool> g_active{false};
// The program's own bindings (ProgramSetsMask). Threads it holds on a narrower mask than the
// original, until they cover it again; written by program threads and read by the controller,
// both under g_apply_mutex (the count also lock-free, for program_bound()).
constexpr int kNarrowedMax = 64;
std::atomic<pid_t> g_narrowed[kNarrowedMax];  // atomic: release() reads it without the lock
bool g_narrowed_seen[kNarrowedMax];  // found by the controller, not told by an interposer (note_narrowed)
std::atomic<int> g_narrowed_count{0};
std::atomic<bool> g_program_binds{false};  // for good: a binding kept, or one on a thread we cannot name
unsigned g_program_calls = 0;              // setaffinity calls of the program so far
bool g_reconfine = false;                  // a thread went back to the whole mask: set every thread again
// Controller only: the program's calls at its last apply(), and how many applies in a row have
// seen narrowed threads while calls went on. A binding is kept after kSettleApplies applies of
// calls (a program that keeps rebinding binds), or once the calls have stopped with threads still
// narrowed and one of them has run kKeptRunNs there (or the calls have been quiet kKeptQuietNs).
// Quiet alone is no binding: a topology probe (libomp's, at its first parallel region) binds the
// thread to each CPU in turn, and a thread niced below a process on that CPU can wait there for
// longer than a cycle between two calls. Read as kept at the next apply, confinement stopped for
// good right after the start in 1 run of 20 (4 of 20 with more threads of ours on the job's CPU:
// docs/enforcement.md, seventieth session); the probe runs microseconds between its calls.
unsigned g_calls_seen = 0;
int g_settling = 0;
constexpr int kSettleApplies = 20;
std::uint64_t g_quiet_since_ns = 0;                   // the first apply that saw no new call; 0: none yet
std::vector<std::pair<pid_t, std::uint64_t>> g_quiet_runs;  // each narrowed thread's run time then
constexpr std::uint64_t kKeptRunNs = 20'000'000;
constexpr std::uint64_t kKeptQuietNs = 1'000'000'000;
// Controller only: every kScanApplies applies, the threads are listed and the masks of those
// already confined read back, for bindings no interposer saw (note_narrowed) and threads cloned
// without pthread_create. In between, only a thread created through it (g_threads_created moved
// since g_created_listed) or a new mask has the threads listed.
unsigned g_applies = 0;
constexpr unsigned kScanApplies = 20;
constinit std::atomic<unsigned> g_threads_created{0};
unsigned g_created_listed = 0;
std::atomic<bool> g_suspended{false};
// The confinement mask now, for thread_to_confined() in program threads.
constinit PublishedMask g_confinement;
// The CPUs the last spreads held threads on one at a time (move_through), and how many more
// looks settle_spread makes for threads that inherited one of them. Controller only.
cpu_set_t g_spread_cpus;
int g_residue_looks = 0;
std::atomic<int> g_confined_cpus{0};
// Spawns in progress (posix_spawn, system, popen in program threads): apply() leaves every thread
// alone while any is, so that the spawning thread stays on the original mask until its child
// exists. The mutex orders the two: a spawn cannot begin in the middle of an apply() (which
// could re-confine the spawning thread after it went back to the original mask: a child then
// started confined, seen under ASan's slower timing). Held only for a few system calls.
std::atomic<int> g_spawning{0};
pthread_mutex_t g_apply_mutex = PTHREAD_MUTEX_INITIALIZER;

struct ApplyLock {
    ApplyLock() noexcept { pthread_mutex_lock(&g_apply_mutex); }
    ~ApplyLock() { pthread_mutex_unlock(&g_apply_mutex); }
    ApplyLock(const ApplyLock&) = delete;
    ApplyLock& operator=(const ApplyLock&) = delete;
};

// A mask of `size` bytes that includes every CPU the process may use of its original mask (the
// kernel's answer for a thread on the original mask, or on one that no longer has an allowed
// CPU): no binding. g_apply_mutex held, or the controller thread.
// A word at a time: the controller asks it of every thread at every apply, and 1024 bit tests a
// call were 1% of a BOTS uts run's instructions (callgrind, one thread of 4 million tasks).
bool covers_allowed(const cpu_set_t* m, size_t size, const cpu_set_t& allowed = g_allowed) {
    constexpr size_t kWord = sizeof(__cpu_mask);
    for (size_t i = 0; i < sizeof(cpu_set_t) / kWord; ++i) {
        __cpu_mask have = 0;  // the bytes of `m` in this word (fewer at its end, none past it)
        if (i * kWord < size)
            std::memcpy(&have, reinterpret_cast<const char*>(m) + i * kWord, std::min(kWord, size - i * kWord));
        if (allowed.__bits[i] & ~have) return false;
    }
    return true;
}
bool covers_allowed(const cpu_set_t& m, const cpu_set_t& allowed = g_allowed) {
    return covers_allowed(&m, sizeof m, allowed);
}

// Whether `m` is what the kernel shows for a thread we set to `ours`: that mask, or its CPUs the
// cpuset `allowed` still has (the kernel keeps the mask asked for and shows the part allowed).
bool shown_for(const cpu_set_t& m, const cpu_set_t& ours, const cpu_set_t& allowed = g_allowed) {
    if (CPU_EQUAL(&m, &ours)) return true;
    cpu_set_t part;
    CPU_AND(&part, &ours, &allowed);
    return CPU_COUNT(&part) > 0 && CPU_EQUAL(&m, &part);
}

// The list of threads the program narrowed (g_narrowed): where tid is among the first n, or n.
int narrowed_at(pid_t tid, int n) {
    int at = 0;
    while (at < n && g_narrowed[at].load(std::memory_order_relaxed) != tid) ++at;
    return at;
}

// g_apply_mutex held. Lists tid (`seen`: found by the controller; a call the program made clears
// that); a full list is a binding that cannot be followed. True if tid was not listed before.
bool narrowed_add(pid_t tid, bool seen) {
    const int n = g_narrowed_count.load(std::memory_order_relaxed);
    const int at = narrowed_at(tid, n);
    if (at < n) {
        g_narrowed_seen[at] = g_narrowed_seen[at] && seen;
        return false;
    }
    if (n == kNarrowedMax) {
        g_program_binds.store(true, std::memory_order_release);
        return false;
    }
    g_narrowed[n].store(tid, std::memory_order_relaxed);
    g_narrowed_seen[n] = seen;
    g_narrowed_count.store(n + 1, std::memory_order_release);
    return true;
}

// g_apply_mutex held. Takes entry `at` of the first n off the list (the last one moves there).
void narrowed_drop(int at, int n) {
    g_narrowed[at].store(g_narrowed[n - 1].load(std::memory_order_relaxed), std::memory_order_relaxed);
    g_narrowed_seen[at] = g_narrowed_seen[n - 1];
    g_narrowed_count.store(n - 1, std::memory_order_release);
}

// Controller thread only.
struct ThreadSeen {
    pid_t tid;
    unsigned generation;
};
std::vector<int> g_cpu_order;        // the original mask's CPUs, topology order
std::vector<ThreadSeen> g_threads;   // threads set to the mask of g_generation
unsigned g_generation = 0;
cpu_set_t g_last;                    // the mask of g_generation
cpu_set_t g_previous;                // the mask of the generation before

long read_number(const char* fmt, int cpu, long fallback) {
    char path[128];
    std::snprintf(path, sizeof path, fmt, cpu);
    FILE* f = std::fopen(path, "re");
    if (!f) return fallback;
    long v = fallback;
    if (std::fscanf(f, "%ld", &v) != 1) v = fallback;
    std::fclose(f);
    return v;
}

// The allowed CPUs (g_allowed) in topology order: CPUs sharing a package, a last-level cache and
// a core end up next to each other, so that
// placement's "nearest free index" means "nearest CPU" (a job of 2 gets the two hardware
// threads of one core, or two cores sharing a cache, not two packages).
void compute_cpu_order() {
    g_cpu_order.clear();
    struct Cpu {
        long package, llc, core;
        int cpu;
    };
    std::vector<Cpu> cpus;
    for (int c = 0; c < CPU_SETSIZE; ++c) {
        if (!CPU_ISSET(c, &g_allowed)) continue;
        cpus.push_back(Cpu{read_number("/sys/devices/system/cpu/cpu%d/topology/physical_package_id", c, 0),
                           read_number("/sys/devices/system/cpu/cpu%d/cache/index3/id", c, 0),
                           read_number("/sys/devices/system/cpu/cpu%d/topology/core_id", c, c), c});
    }
    std::sort(cpus.begin(), cpus.end(), [](const Cpu& a, const Cpu& b) {
        return std::tie(a.package, a.llc, a.core, a.cpu) < std::tie(b.package, b.llc, b.core, b.cpu);
    });
    for (const Cpu& c : cpus) g_cpu_order.push_back(c.cpu);
}

// An environment variable set to something: both runtimes read an empty one as unset.
const char* value_of(const char* name) {
    const char* v = std::getenv(name);
    return v && *v ? v : nullptr;
}

// OMP_PROC_BIND's value `v` is "false" (any case, blanks around it, as both runtimes parse it).
bool says_false(const char* v) {
    while (*v == ' ' || *v == '\t') ++v;
    if (strncasecmp(v, "false", 5) != 0) return false;
    for (v += 5; *v == ' ' || *v == '\t'; ++v) {
    }
    return *v == '\0';
}

// KMP_AFFINITY's value `v` names a binding type: without one (KMP_AFFINITY=verbose) or with none
// or disabled, libomp binds nothing, and it ignores OMP_PROC_BIND and OMP_PLACES either way.
bool kmp_affinity_binds(const char* v) {
    if (strcasestr(v, "none") || strcasestr(v, "disabled")) return false;
    for (const char* type : {"compact", "scatter", "explicit", "balanced", "logical", "physical"})
        if (strcasestr(v, type)) return true;
    return false;
}

constexpr const char* kProcBind = "OMP_PROC_BIND is set (the user binds threads)";
constexpr const char* kPlaces = "OMP_PLACES is set (the user binds threads)";
constexpr const char* kGompAffinity = "GOMP_CPU_AFFINITY is set (the user binds threads)";
constexpr const char* kKmpAffinity = "KMP_AFFINITY is set (the user binds threads)";

const char* gnu_binding() {
    if (const char* bind = value_of("OMP_PROC_BIND")) return says_false(bind) ? nullptr : kProcBind;
    if (value_of("OMP_PLACES")) return kPlaces;
    return value_of("GOMP_CPU_AFFINITY") ? kGompAffinity : nullptr;
}

const char* llvm_binding() {
    if (const char* affinity = value_of("KMP_AFFINITY")) return kmp_affinity_binds(affinity) ? kKmpAffinity : nullptr;
    if (value_of("GOMP_CPU_AFFINITY")) return kGompAffinity;
    if (value_of("OMP_PLACES")) return kPlaces;
    const char* bind = value_of("OMP_PROC_BIND");
    return bind && !says_false(bind) ? kProcBind : nullptr;
}

// The CPUs of the table processors `procs` (of P), into `mask`: empty for a row without a set
// yet. False when the original mask has no CPU to map them to.
bool mask_for(const gat::ProcSet& procs, int P, cpu_set_t& mask) {
    if (g_cpu_order.empty()) compute_cpu_order();
    const int n = static_cast<int>(g_cpu_order.size());
    if (n == 0) return false;
    CPU_ZERO(&mask);
    for (int i = 0; i < P && i < gat::kMaxProcessors; ++i)
        if (procs[i]) CPU_SET(g_cpu_order[i % n], &mask);
    return true;
}

}  // namespace

// Set once the mask the process started with is known: by capture_at_load, or earlier by
// capture_before_binding. Any thread may read it.
std::atomic<bool> g_original_known{false};

void capture_before_binding() noexcept {
    if (g_original_known.load(std::memory_order_acquire)) return;
    g_captured = get_mask(0, g_original);
    g_original_known.store(true, std::memory_order_release);
}

void capture_at_load() noexcept {
    if (!g_original_known.load(std::memory_order_acquire)) g_captured = get_mask(0, g_original);
    g_original_known.store(true, std::memory_order_release);
    g_allowed = g_home = g_original;
    g_allowed_shown.publish(g_original);
    if (!g_captured) {
        g_why_off = "the process's CPU mask cannot be read";
        g_off_by_fault = true;
    } else {
        g_gnu_binding = gnu_binding();
        g_llvm_binding = llvm_binding();
    }
    // Only an OpenMP runtime binds threads for these: where the program links one that binds for
    // them (the loader mapped it before any constructor ran), confinement stays off from the start.
    // Elsewhere they bind nothing (a oneTBB program run where OMP_PROC_BIND is set for every job,
    // as HPC modules do, was held by parking only); a runtime that a plugin or a Python module
    // loads later binds its threads then, which the program's bindings (ProgramSetsMask) find and
    // follow, with this reason (bound_reason).
    if (const char* why = loaded_runtime_binding()) g_why_off = why;
}

void disable(const char* why) noexcept {
    if (!g_why_off) g_why_off = why;
}

namespace {

// The calling thread's seccomp mode (/proc/thread-self/status, "Seccomp:"): 0 none, 1 strict,
// 2 a filter; -1 unknown (no such line: a kernel without seccomp).
int seccomp_mode() noexcept {
    FILE* f = std::fopen("/proc/thread-self/status", "re");
    if (!f) return -1;
    int mode = -1;
    char line[256];
    while (std::fgets(line, sizeof line, f))
        if (std::sscanf(line, "Seccomp: %d", &mode) == 1) break;
    std::fclose(f);
    return mode;
}

// The probe child: the same call apply() makes, on itself (its mask is its own). SIGSYS back to
// its default first, in its own copy of the handlers, so that a filter's SECCOMP_RET_TRAP kills
// it rather than running a handler of the program's in it.
int probe_child(void*) {
    signal(SIGSYS, SIG_DFL);
    long r = kernel_syscall(SYS_sched_setaffinity, 0, sizeof g_original, &g_original);
    syscall(SYS_exit, r == 0 ? 0 : errno);
    return 0;
}

}  // namespace

void check_system() noexcept {
    if (g_why_off) return;
    bool listed = false;
    gat::self_threads(&listed);
    if (!listed) {
        g_why_off = kNoThreadList;
        g_off_by_fault = true;
        return;
    }
    if (seccomp_mode() != 2) return;
    int saved = errno;
    // Exit signal 0: no SIGCHLD reaches the program, and only __WALL waits see the child.
    alignas(16) static char stack[64 * 1024];
    pid_t child = clone(probe_child, stack + sizeof stack, 0, nullptr);
    int status = 0;
    pid_t got = -1;
    if (child > 0)
        do got = waitpid(child, &status, __WALL);
        while (got < 0 && errno == EINTR);
    errno = saved;
    if (got != child) return;  // not known: the first refusal in apply() turns confinement off
    if (WIFSIGNALED(status)) {
        g_why_off = "the system would kill the process if it set CPU affinity (a seccomp filter that does not allow "
                    "sched_setaffinity)";
    } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
        static char why[200];
        const char* what = strerrordesc_np(WEXITSTATUS(status));
        std::snprintf(why, sizeof why, "the system does not let the process set CPU affinity (sched_setaffinity: %s; "
                      "a seccomp filter or a sandbox?)", what ? what : "refused");
        g_why_off = why;
    } else {
        return;
    }
    g_off_by_fault = true;
}

const char* why_off() noexcept { return g_why_off.load(std::memory_order_relaxed); }

const char* libomp_binding_asked() noexcept { return g_llvm_binding; }

bool off_by_fault() noexcept { return g_why_off.load() && g_off_by_fault; }

bool off_by_program() noexcept { return g_why_off.load() == kProgramBinds; }

bool active() noexcept { return g_active.load(std::memory_order_acquire); }

const cpu_set_t& allowed() noexcept { return g_allowed_shown.read(); }

int original_cpus() noexcept { return g_captured ? CPU_COUNT(&allowed()) : 0; }

int confined_cpus() noexcept { return g_confined_cpus.load(std::memory_order_relaxed); }

void suspend(bool on) noexcept { g_suspended.store(on, std::memory_order_release); }

bool suspended() noexcept { return g_suspended.load(std::memory_order_acquire); }

ProgramSetsMask::ProgramSetsMask() noexcept { pthread_mutex_lock(&g_apply_mutex); }

ProgramSetsMask::~ProgramSetsMask() { pthread_mutex_unlock(&g_apply_mutex); }

void ProgramSetsMask::done(pid_t tid, size_t size, const cpu_set_t* mask) noexcept {
    ++g_program_calls;
    if (covers_allowed(mask, size)) {  // back on every CPU: confinement lost on that thread, no binding any more
        g_reconfine = true;
        const int n = g_narrowed_count.load(std::memory_order_relaxed);
        if (const int at = narrowed_at(tid, n); at < n) narrowed_drop(at, n);
    } else if (tid == 0) {
        g_program_binds.store(true, std::memory_order_release);  // cannot be followed: a binding
    } else {
        narrowed_add(tid, /*seen=*/false);
    }
}

bool program_bound() noexcept {
    return g_program_binds.load(std::memory_order_acquire) || g_narrowed_count.load(std::memory_order_acquire) > 0;
}

namespace {

enum class Bindings { none, settling, kept };

// g_apply_mutex held. A thread on a narrower mask that is not ours, set by a route no interposer
// sees: a library dlopen'ed with RTLD_DEEPBIND (oneTBB's tbbbind loads hwloc so: its calls bind to
// libc, not to us), or a raw system call (libomp's affinity code). Taken as the program's call.
void note_narrowed(pid_t tid) {
    if (narrowed_add(tid, /*seen=*/true)) ++g_program_calls;
}

// Whether a thread's mask `m` is one the program (or a library in it) chose: narrower than the
// allowed CPUs, and neither ours now nor the one we set before (a thread we have not moved yet,
// or one created by such a thread), as the kernel shows them within the cpuset.
bool foreign(const cpu_set_t& m) {
    return !covers_allowed(m) && !shown_for(m, g_last) && !shown_for(m, g_previous);
}

// g_apply_mutex held, the program's calls quiet since the last apply, n threads narrowed: whether
// their binding stays (g_quiet_since_ns). A thread's run time reads 0 where the kernel keeps no
// schedstats: then the quiet time alone decides.
bool binding_stays(int n) {
    const std::uint64_t now = now_ns();
    if (g_quiet_since_ns == 0) {
        g_quiet_since_ns = now;
        g_quiet_runs.clear();
        for (int i = 0; i < n; ++i) {
            const pid_t tid = g_narrowed[i].load(std::memory_order_relaxed);
            g_quiet_runs.emplace_back(tid, gat::thread_run_ns(tid));
        }
        return false;
    }
    if (now - g_quiet_since_ns >= kKeptQuietNs) return true;
    for (const auto& [tid, then] : g_quiet_runs)
        if (narrowed_at(tid, n) < n && gat::thread_run_ns(tid) >= then + kKeptRunNs) return true;
    return false;
}

// g_apply_mutex held. What the program's own setaffinity calls amount to now: none (then every
// thread it took back to the whole mask is confined again), still settling (leave every thread
// alone this cycle), or a binding it keeps.
Bindings program_bindings() {
    if (g_program_binds.load(std::memory_order_acquire)) return Bindings::kept;
    int n = g_narrowed_count.load(std::memory_order_relaxed);
    // Threads gone, or back on every CPU through a call we could not attribute; and those the
    // controller found, once back on our mask (libomp's topology probe restores the mask it read).
    for (int i = 0; i < n;) {
        cpu_set_t m;
        if (!get_mask(g_narrowed[i].load(std::memory_order_relaxed), m) || covers_allowed(m) ||
            (g_narrowed_seen[i] && shown_for(m, g_last)))
            narrowed_drop(i, n--);
        else
            ++i;
    }
    if (n == 0) {
        g_settling = 0;
        g_calls_seen = g_program_calls;
        g_quiet_since_ns = 0;
        if (g_reconfine) g_threads.clear();  // every thread is set to the mask again below
        g_reconfine = false;
        return Bindings::none;
    }
    if (g_program_calls != g_calls_seen) {
        g_calls_seen = g_program_calls;
        g_quiet_since_ns = 0;
        if (++g_settling < kSettleApplies) return Bindings::settling;
    } else if (!binding_stays(n)) {
        return Bindings::settling;
    }
    g_program_binds.store(true, std::memory_order_release);
    return Bindings::kept;
}

}  // namespace

static void settle_spread(bool spread_ended) noexcept;

namespace {

pid_t g_controller_tid = 0;  // the thread that calls apply() and spread()

// Controller thread: the CPUs of the original mask the process may use now, from the thread's own
// mask (the original or wider, which the kernel cuts to the cpuset); where the process follows its
// cpuset (g_home is every CPU), every CPU the cpuset allows, the ones it gained too. False where it
// cannot be read, or where the cpuset has none of the original's CPUs (the job's masks then fail,
// and confinement stops).
bool read_allowed(cpu_set_t& allowed) {
    cpu_set_t own;
    if (!get_mask(0, own)) return false;
    CPU_AND(&allowed, &own, &g_home);
    return CPU_COUNT(&allowed) > 0;
}

// Controller thread, g_apply_mutex held. Follows a change of the process's cpuset: the table's
// indices map into the CPUs it allows now, and what binds nothing is a mask covering those.
// Without this, a cpuset that shrank read as a binding of the program's (the kernel moves
// threads whose CPUs it took onto the cpuset's), and confinement stopped for good with threads
// left on a CPU of the last confinement, where the kernel put them back once the cpuset grew
// again (it keeps the mask asked for). True where it changed.
bool follow_cpuset() {
    cpu_set_t now;
    if (!read_allowed(now) || CPU_EQUAL(&now, &g_allowed)) return false;
    g_allowed = now;
    g_allowed_shown.publish(now);
    compute_cpu_order();
    return true;
}

// Thread `tid` back to the original mask (g_home). Where none of its CPUs is allowed any more
// (EINVAL), to every CPU, which the kernel cuts to the cpuset: the mask asked for must not stay
// ours, or the kernel would put the thread back on it once the cpuset allows it again.
void to_original(pid_t tid) {
    if (set_mask(tid, g_home) == EINVAL) set_mask(tid, every_cpu());
}

}  // namespace

bool apply(const gat::ProcSet& procs, int P, pid_t skip_tid) noexcept {
    if (g_program_binds.load(std::memory_order_acquire) && !g_why_off) {
        g_why_off = bound_reason();
        release();
    }
    if (g_why_off) return false;
    ApplyLock lock;
    if (g_spawning.load(std::memory_order_acquire) > 0) return true;  // a child is starting on the original mask
    g_controller_tid = skip_tid;
    settle_spread(/*spread_ended=*/false);
    const bool remapped = follow_cpuset();
    switch (program_bindings()) {
        case Bindings::none: break;
        case Bindings::settling: return true;
        case Bindings::kept:
            g_why_off = bound_reason();
            release();
            return false;
    }
    cpu_set_t mask;
    if (!mask_for(procs, P, mask)) return false;
    if (CPU_COUNT(&mask) == 0) return true;  // a row without a set yet: nothing to enforce
    const bool whole = covers_allowed(mask);
    if (whole && !active()) return true;
    const bool new_mask = g_threads.empty() || remapped || !CPU_EQUAL(&mask, &g_last);
    if (new_mask) {
        ++g_generation;
        g_previous = g_threads.empty() ? g_original : g_last;
        g_last = mask;
        g_confinement.publish(mask);
    }
    // Active before the first thread is confined: from then on the interposers show the original.
    g_active.store(true, std::memory_order_release);
    const bool scan = ++g_applies % kScanApplies == 0;
    // Read before the listing: a thread whose creation counts after this read is listed next time.
    const unsigned created = g_threads_created.load(std::memory_order_acquire);
    if (!new_mask && !scan && created == g_created_listed) return true;  // every thread listed is on the mask
    g_created_listed = created;
    bool listed = false;
    const std::vector<pid_t> tids = gat::self_threads(&listed);
    if (!listed) {  // confined threads could be neither followed nor let go: stop while we know them
        g_why_off = kNoThreadList;
        g_off_by_fault = true;
        release();
        return false;
    }
    std::vector<ThreadSeen> now;
    for (pid_t tid : tids) {
        if (tid == skip_tid) continue;
        auto it = std::find_if(g_threads.begin(), g_threads.end(), [&](const ThreadSeen& t) { return t.tid == tid; });
        bool current = it != g_threads.end() && it->generation == g_generation;
        if (!current || scan) {  // never move a thread the program bound itself
            cpu_set_t m;
            if (get_mask(tid, m)) {
                if (foreign(m)) {
                    note_narrowed(tid);
                    continue;
                }
                current = current && CPU_EQUAL(&m, &g_last);  // set back to every CPU: confine it again
            }
        }
        if (!current) {
            // The whole of a shrunk cpuset as the original mask, not as the CPUs it has now: the
            // kernel keeps the mask asked for, and gives it back when the cpuset grows again.
            int err = set_mask(tid, whole ? g_home : mask);
            // EINVAL: none of these CPUs is allowed any more: the cpuset changed just now (the
            // next apply follows it), or it has none of the original's CPUs. EPERM: the system
            // forbids the call (a seccomp filter: systemd's SystemCallFilter=~@resources, a
            // sandbox), for every thread alike, since a process's threads share their credentials.
            if (cpu_set_t now; err == EINVAL && read_allowed(now) && !CPU_EQUAL(&now, &g_allowed)) return true;
            if (err == EINVAL || err == EPERM) {
                g_why_off = err == EINVAL ? "the job's CPUs are no longer allowed (cpuset changed)"
                                          : "the system does not let the process set CPU affinity (sched_setaffinity: "
                                            "Operation not permitted; a seccomp filter or a sandbox?)";
                g_off_by_fault = true;
                release();
                return false;
            }
            if (err != 0) continue;  // ESRCH: the thread just ended
        }
        now.push_back(ThreadSeen{tid, g_generation});
    }
    g_threads.swap(now);
    g_confined_cpus.store(whole ? 0 : CPU_COUNT(&mask), std::memory_order_relaxed);
    if (whole) {  // every thread is back at the original mask: nothing to hide or undo any more
        g_threads.clear();
        g_active.store(false, std::memory_order_release);
    }
    return true;
}

void thread_created() noexcept { g_threads_created.fetch_add(1, std::memory_order_release); }
unsigned threads_created() noexcept { return g_threads_created.load(std::memory_order_acquire); }

int cpus_for(const gat::ProcSet& procs, int P) noexcept {
    if (g_why_off) return 0;
    cpu_set_t mask;
    return mask_for(procs, P, mask) && !covers_allowed(mask) ? CPU_COUNT(&mask) : 0;
}

bool restricts(const gat::ProcSet& procs, int P) noexcept { return cpus_for(procs, P) > 0; }

// Thread `tid` onto `cpu` alone for a moment (the kernel moves it there at once), then onto the
// original mask, where it stays on that CPU until the kernel has a reason to move it: a spread.
static void move_through(pid_t tid, int cpu) noexcept {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    CPU_SET(cpu, &g_spread_cpus);
    set_mask(tid, one);
    to_original(tid);
}

// The threads a spread moves, those running now first (state R in /proc): the spread deals the
// CPUs out in turn, so the running ones each get a CPU of their own before a sleeping thread takes
// a turn (a sanitizer's background thread, an interpreter's or a library's idle helpers, created
// before the team's workers and listed between them). In thread-id order a team of two on 2 CPUs
// behind one sleeping thread got the same CPU twice, and the kernel took tens of milliseconds to
// part them. Where /proc cannot be read every thread reads as not running: the order stays.
static void running_first(std::vector<pid_t>& tids) noexcept {
    std::stable_partition(tids.begin(), tids.end(), [](pid_t tid) { return gat::read_own_thread(tid).state == 'R'; });
}

// A thread created by one that move_through holds on one CPU inherits that CPU alone, and would
// read as bound by the program (foreign): a program starting a team of 1000 threads while the
// start spread its master lost confinement for good in 2 runs of 4 ("the program sets CPU
// affinity itself"; fortieth session), and every thread so created stayed on one CPU. After a
// spread, threads on one of its CPUs alone (not a binding the program told us of, not our own
// one-CPU confinement) go back to the original mask: at its end, and at the next kResidueLooks
// applies or spreads, since a clone may copy the mask before our last call and list its thread
// only after our look. Controller thread (the program's bindings read as release() reads them).
constexpr int kResidueLooks = 2;
static void settle_spread(bool spread_ended) noexcept {
    if (spread_ended) g_residue_looks = kResidueLooks + 1;
    if (g_residue_looks == 0) return;
    --g_residue_looks;
    const int narrowed = g_narrowed_count.load(std::memory_order_acquire);
    for (pid_t tid : gat::self_threads()) {
        cpu_set_t m, left;
        if (!get_mask(tid, m) || CPU_COUNT(&m) != 1 || (active() && CPU_EQUAL(&m, &g_last))) continue;
        CPU_AND(&left, &m, &g_spread_cpus);
        if (CPU_COUNT(&left) == 1 && narrowed_at(tid, narrowed) == narrowed) to_original(tid);
    }
    if (g_residue_looks == 0) CPU_ZERO(&g_spread_cpus);
}

void release(bool spread) noexcept {
    if (!active()) return;
    // Spread: the CPUs just freed first, then the others, in topology order.
    std::vector<int> order;
    if (spread) {
        for (int c : g_cpu_order)
            if (!CPU_ISSET(c, &g_last)) order.push_back(c);
        for (int c : g_cpu_order)
            if (CPU_ISSET(c, &g_last)) order.push_back(c);
    }
    std::size_t next = 0;
    // Only threads still on our mask: a thread the program bound itself keeps its own, also one it
    // bound to our very mask where we know it (ProgramSetsMask; one bound by a raw system call to
    // exactly our mask cannot be told from ours, and goes back to the original mask). Our mask as
    // the cpuset allows it now; where the cpuset has shrunk, also threads on all of it (the kernel
    // put there those it left no CPU of ours), since the mask they asked for is still ours and
    // comes back when the cpuset grows (where it grew beyond the original, threads on all of it are
    // let go too: onto every CPU, as they would be). The cpuset as the controller reads it, or as
    // it last read it (shutdown, on a program thread).
    cpu_set_t allowed_now = g_allowed;
    if (g_controller_tid != 0 && g_controller_tid == static_cast<pid_t>(syscall(SYS_gettid))) read_allowed(allowed_now);
    const bool changed = !CPU_EQUAL(&allowed_now, &g_original);
    const int narrowed = g_narrowed_count.load(std::memory_order_acquire);
    bool listed = false;
    std::vector<pid_t> tids = gat::self_threads(&listed);
    if (!listed)  // no /proc any more: the threads we confined are the ones we know
        for (const ThreadSeen& t : g_threads) tids.push_back(t.tid);
    if (!order.empty()) running_first(tids);
    for (pid_t tid : tids) {
        cpu_set_t m;
        if (!get_mask(tid, m) || narrowed_at(tid, narrowed) < narrowed) continue;
        if (!shown_for(m, g_last, allowed_now) && !(changed && covers_allowed(m, allowed_now))) continue;
        if (!order.empty())
            move_through(tid, order[next++ % order.size()]);
        else
            to_original(tid);
    }
    g_threads.clear();
    g_confined_cpus.store(0, std::memory_order_relaxed);
    g_active.store(false, std::memory_order_release);
    if (!order.empty()) settle_spread(/*spread_ended=*/true);
}

int spread(pid_t skip_tid) noexcept {
    if (g_why_off || active()) return 0;
    ApplyLock lock;
    g_controller_tid = skip_tid;
    settle_spread(/*spread_ended=*/false);
    if (g_spawning.load(std::memory_order_acquire) > 0 || program_bindings() != Bindings::none) return 0;
    if (g_cpu_order.empty()) compute_cpu_order();
    if (g_cpu_order.size() < 2) return 0;
    // Active meanwhile: a thread asking for its mask during its moment on one CPU is shown the
    // original, as while confined.
    g_active.store(true, std::memory_order_release);
    std::size_t next = 0;
    std::vector<pid_t> tids = gat::self_threads();
    running_first(tids);
    for (pid_t tid : tids) {
        cpu_set_t m;
        if (tid == skip_tid || !get_mask(tid, m) || !CPU_EQUAL(&m, &g_allowed)) continue;  // the program's own
        move_through(tid, g_cpu_order[next++ % g_cpu_order.size()]);
    }
    g_active.store(false, std::memory_order_release);
    settle_spread(/*spread_ended=*/true);
    return static_cast<int>(next);
}

void thread_to_original() noexcept {
    if (active()) set_mask(0, g_home);
}

void thread_to_confined() noexcept {
    if (active()) set_mask(0, g_confinement.read());
}

void reset_thread_mask() noexcept {
    if (off_by_fault()) return;  // no /proc, or the system forbids the call or may kill for it (check_system)
    // The union of every thread's mask and the one captured at load: a runtime that binds threads
    // (OMP_PROC_BIND) may have bound the main thread before our constructor ran (libgomp binds it
    // in its own), so the captured mask alone can be a single CPU.
    cpu_set_t all = g_original;
    for (pid_t tid : gat::self_threads()) {
        cpu_set_t m;
        if (get_mask(tid, m)) CPU_OR(&all, &all, &m);
    }
    // Where the user binds threads, the runtime may already have bound every thread there is (the
    // first team's workers do not exist yet when the controller starts): ask for every CPU, and
    // the kernel keeps those the process may use (its cpuset), which is what the binding chose
    // from. Otherwise the union above holds the mask the process was started with (taskset).
    if (const char* why = g_why_off.load(); why && std::strstr(why, "binds threads")) all = every_cpu();
    // Where the original mask is every CPU the cpuset allows (what the kernel keeps of a request
    // for all of them), the process follows its cpuset (g_home): the controller asks for every CPU,
    // so that the CPUs it reads (read_allowed) and counts for P (default_processors, the
    // interposed sched_getaffinity) grow with the cpuset. A process the user started under
    // taskset on exactly its cpuset's CPUs cannot be told from it (the kernel shows no mask asked
    // for), and follows a growth too.
    const cpu_set_t every = every_cpu();
    cpu_set_t kept;
    if (set_mask(0, every) == 0 && get_mask(0, kept) && CPU_EQUAL(&kept, &g_original)) {
        g_home = every;
        return;
    }
    if (CPU_COUNT(&all) > 0) set_mask(0, all);
}

void spawn_begin() noexcept {
    ApplyLock lock;
    g_spawning.fetch_add(1, std::memory_order_acq_rel);
    thread_to_original();
}

void spawn_end() noexcept {
    ApplyLock lock;
    thread_to_confined();
    g_spawning.fetch_sub(1, std::memory_order_acq_rel);
}

namespace {
// publish_placement's ranks, one byte a CPU (kUnplaced: not the job's), and whether they are known.
// Written by the controller only, read by any thread; a reader meeting a change halfway reads a mix
// of the two, which costs one choice of a working thread (adapters/omp/parking.hpp), never
// correctness.
std::atomic<std::uint8_t> g_rank[kRankedCpus];
std::atomic<bool> g_ranks_known{false};

bool off_by_binding(const char* why) noexcept {
    return why == kProcBind || why == kPlaces || why == kGompAffinity || why == kKmpAffinity || why == kProgramBinds;
}
}  // namespace

void publish_placement(const gat::ProcSet& procs, int P) noexcept {
    if (!off_by_binding(why_off()) || !procs.any()) {
        g_ranks_known.store(false, std::memory_order_release);
        return;
    }
    if (g_cpu_order.empty()) compute_cpu_order();
    const int n = static_cast<int>(g_cpu_order.size());
    if (n == 0) {
        g_ranks_known.store(false, std::memory_order_release);
        return;
    }
    // Every cycle, so only the CPUs of the original mask are written (and only where they
    // changed); the rest read kUnplaced from the first time.
    static bool filled = false;
    if (!filled) {
        for (auto& r : g_rank) r.store(static_cast<std::uint8_t>(kUnplaced), std::memory_order_relaxed);
        filled = true;
    }
    std::uint8_t ranks[kRankedCpus];
    for (int cpu : g_cpu_order)
        if (cpu < kRankedCpus) ranks[cpu] = static_cast<std::uint8_t>(kUnplaced);
    int next = 0;
    for (int i = 0; i < P && i < gat::kMaxProcessors; ++i) {
        const int cpu = g_cpu_order[i % n];  // APSHIM_P above the CPUs: processors share them
        if (procs[i] && cpu < kRankedCpus && ranks[cpu] == kUnplaced) ranks[cpu] = static_cast<std::uint8_t>(std::min(next++, kUnplaced - 1));
    }
    for (int cpu : g_cpu_order)
        if (cpu < kRankedCpus && g_rank[cpu].load(std::memory_order_relaxed) != ranks[cpu])
            g_rank[cpu].store(ranks[cpu], std::memory_order_relaxed);
    if (!g_ranks_known.load(std::memory_order_relaxed)) g_ranks_known.store(true, std::memory_order_release);
}

int rank(int cpu) noexcept {
    if (cpu < 0 || cpu >= kRankedCpus || !g_ranks_known.load(std::memory_order_acquire)) return -1;
    return g_rank[cpu].load(std::memory_order_relaxed);
}

void after_fork_child() noexcept {
    g_ranks_known.store(false, std::memory_order_relaxed);  // the child's controller publishes its own
    // Only the forking thread exists: another thread may have held the mutex at the fork.
    g_apply_mutex = PTHREAD_MUTEX_INITIALIZER;
    // The parent's threads are not the child's: of the program's bindings only the forking
    // thread's own can remain, on a mask that is neither the original nor ours. Our mask goes.
    cpu_set_t own;
    const bool known = get_mask(0, own);
    const bool ours = active() && known && shown_for(own, g_last);
    if (g_narrowed_count.load(std::memory_order_relaxed) > 0 && known && !ours && !covers_allowed(own))
        g_program_binds.store(true, std::memory_order_relaxed);
    g_narrowed_count.store(0, std::memory_order_relaxed);
    g_reconfine = false;
    g_settling = 0;
    g_quiet_since_ns = 0;
    if (ours) to_original(0);
    g_threads.clear();
    g_confined_cpus.store(0, std::memory_order_relaxed);
    g_active.store(false, std::memory_order_relaxed);
    g_spawning.store(0, std::memory_order_relaxed);
    g_suspended.store(false, std::memory_order_relaxed);
}

}  // namespace apshim::confine
