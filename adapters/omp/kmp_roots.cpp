// libomp's roots of the shim's own, while confinement shares the job's CPUs (kmp_roots.hpp).
#include "adapters/omp/kmp_roots.hpp"

#include <linux/futex.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

namespace apshim::omp_adapter {
namespace {

// A root's slot. Controller thread (and exit, and a fork child) only, except `leave`, which its
// root waits on, and `registered`, which its root sets.
struct Root {
    pthread_t thread{};
    bool started = false;                    // a thread runs (or ran and is not joined yet)
    std::atomic<std::uint32_t> leave{0};     // 1: return now
    std::atomic<bool> registered{false};     // libomp counts it (its first call returned)
};
// Twice the most ever wanted: roots asked to leave are joined on later cycles, while new ones may
// start meanwhile.
Root g_roots[2 * kMaxKmpRoots];
std::atomic<int> g_alive{0};   // registered and not asked to leave
std::atomic<int> g_cpus{0};    // omp_get_num_procs() as the first root read it

struct Start {
    Root* root;
    KmpEntries entries;
};
Start g_start[2 * kMaxKmpRoots];

void* root_main(void* arg) {
    auto* s = static_cast<Start*>(arg);
    s->entries.register_root();  // libomp registers this thread as a root: its count grows by one
    if (s->entries.num_procs && g_cpus.load() == 0) g_cpus.store(s->entries.num_procs());
    s->root->registered.store(true);
    while (s->root->leave.load() == 0)
        syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&s->root->leave), FUTEX_WAIT_PRIVATE, 0, nullptr, nullptr, 0);
    return nullptr;  // libomp's thread-exit handler unregisters the root: its count shrinks again
}

bool start_root(int i, const KmpEntries& entries) noexcept {
    Root& r = g_roots[i];
    r.leave.store(0);
    r.registered.store(false);
    g_start[i] = {&r, entries};
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0) return false;
    // It calls two libomp queries and waits: a small stack (libomp's root set-up takes a few KiB).
    pthread_attr_setstacksize(&attr, 256 * 1024);
    // Created on the controller's thread, it inherits that thread's signal mask: the program's
    // asynchronous signals blocked, the synchronous fault signals open (shim/controller.cpp).
    r.started = pthread_create(&r.thread, &attr, root_main, &g_start[i]) == 0;
    pthread_attr_destroy(&attr);
    if (r.started) pthread_setname_np(r.thread, "apshim-kmp");
    return r.started;
}

void ask_to_leave(Root& r) noexcept {
    r.leave.store(1);
    syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&r.leave), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}

// Roots that left (or are leaving), joined once they are gone; `wait_ms` > 0: at most that long.
void reap(int wait_ms) noexcept {
    timespec deadline{};
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_nsec += static_cast<long>(wait_ms) * 1000000L;
    deadline.tv_sec += deadline.tv_nsec / 1000000000L;
    deadline.tv_nsec %= 1000000000L;
    for (Root& r : g_roots) {
        if (!r.started || r.leave.load() == 0) continue;
        int rc = wait_ms > 0 ? pthread_timedjoin_np(r.thread, nullptr, &deadline) : pthread_tryjoin_np(r.thread, nullptr);
        if (rc == 0) r.started = false;
    }
}

int running() noexcept {
    int n = 0;
    for (const Root& r : g_roots) n += r.started && r.leave.load() == 0;
    return n;
}

}  // namespace

void kmp_roots_follow(bool share, int team, const KmpEntries& entries) noexcept {
    reap(0);
    int want = share && entries.register_root ? kmp_roots_needed(g_cpus.load(), team) : 0;
    int have = running();
    for (int i = 0; i < 2 * kMaxKmpRoots && have < want; ++i)
        if (!g_roots[i].started && start_root(i, entries)) ++have;
    for (int i = 2 * kMaxKmpRoots - 1; i >= 0 && have > want; --i)
        if (g_roots[i].started && g_roots[i].leave.load() == 0) ask_to_leave(g_roots[i]), --have;
    int alive = 0;
    for (const Root& r : g_roots) alive += r.started && r.leave.load() == 0 && r.registered.load();
    g_alive.store(alive);
}

void kmp_roots_release() noexcept {
    for (Root& r : g_roots)
        if (r.started) ask_to_leave(r);
    reap(100);
    g_alive.store(0);
}

void kmp_roots_after_fork_child() noexcept {
    for (Root& r : g_roots) {
        r.started = false;
        r.leave.store(0);
        r.registered.store(false);
    }
    g_alive.store(0);
}

int kmp_roots_alive() noexcept { return g_alive.load(); }

}  // namespace apshim::omp_adapter
