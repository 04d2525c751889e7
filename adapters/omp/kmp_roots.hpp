// libomp told the truth about oversubscription while confinement has the job's threads share CPUs.
//
// libomp's spin-waits (a barrier's gather, a taskwait with nothing left to steal, a lock) yield
// the CPU at every round only while it counts more of its threads than CPUs (KMP_OVERSUBSCRIBED:
// its registered roots plus its teams' workers against the CPUs of the mask it saw at its start);
// otherwise they spin with `pause`, yielding every few hundred rounds at most. Confinement puts
// the job's threads on fewer CPUs without libomp knowing, so a waiting thread keeps the very
// teammate it waits for off the CPU for those rounds at every hand-over. Measured at allotment 1
// on 2 CPUs, clang programs (a stand-in co-runner, `APSHIM_CONFINE_CHECK=0`; task-clock):
//
//   40 000 regions of two tasks and a taskwait      5.3 s   with one root 1.7 s   (taskset, 2 threads on 1 CPU: 1.3-1.5 s;
//                                                                                one thread 0.77 s)
//   40 000 regions with a detached task             5.0 s                 2.0 s
//   tiny regions for 3 s (tests/omp/omp_phases)     38 000 a second       52 000  (taskset: 57 000)
//   BOTS (18 programs) and NPB (12), clang          the same within the VM's noise
//
// libomp has no interface to change that count, but it counts every thread that calls into it as
// a root (its first call registers the thread; its exit unregisters it). So while confinement
// shares the job's CPUs the shim keeps a few threads of its own registered there, idle in a futex
// wait ("apshim-kmp" in /proc), enough to put libomp's count above its CPUs; when the sharing ends
// they return and exit, and libomp counts them out. They run no OpenMP code and are in no team:
// team sizes, omp_get_max_threads() and every ICV of the program's threads stay as they were.
// Not where the user capped libomp's threads in all (KMP_DEVICE_THREAD_LIMIT, KMP_ALL_THREADS),
// where a root could count against a team.
#pragma once

namespace apshim::omp_adapter {

// More roots than this are not worth their threads (a team much narrower than libomp's CPUs).
constexpr int kMaxKmpRoots = 4;

// How many roots of the shim's own put libomp's thread count above `cpus` (the CPUs libomp saw at
// its start: omp_get_num_procs()), with `team` threads of the program's (its last outermost team,
// the primary included): its count is then team + roots. 0 where more than kMaxKmpRoots would be
// needed, or where `cpus` is not known yet (a first root, started to ask, then answers it).
constexpr int kmp_roots_needed(int cpus, int team) noexcept {
    if (cpus <= 0 || team <= 0) return 1;
    int need = cpus - team + 1;
    if (need < 1) need = 1;  // already above: one keeps it so as a team narrows
    return need <= kMaxKmpRoots ? need : 0;
}
static_assert(kmp_roots_needed(2, 2) == 1 && kmp_roots_needed(16, 16) == 1 && kmp_roots_needed(16, 14) == 3 &&
              kmp_roots_needed(16, 4) == 0 && kmp_roots_needed(0, 2) == 1 && kmp_roots_needed(2, 8) == 1);

// libomp's entry points the roots call, found beside its __kmpc_fork_call (kmp_hooks.cpp).
struct KmpEntries {
    int (*register_root)() = nullptr;  // omp_get_max_threads: a new thread's first call registers it
    int (*num_procs)() = nullptr;      // omp_get_num_procs: the CPUs libomp saw at its start
};

// Controller thread, every cycle of the libomp adapter: `share` is whether confinement has the
// job's threads share CPUs now, `team` the program's last outermost team. Starts roots, or asks
// them to leave, and reaps those that left.
void kmp_roots_follow(bool share, int team, const KmpEntries& entries) noexcept;

// Exit (the adapter's release(), before libomp's own exit handlers): every root leaves, and is
// waited for (up to 100 ms), so that libomp has counted it out before it shuts down.
void kmp_roots_release() noexcept;

// In a fork() child: no root exists there (only the forking thread survives).
void kmp_roots_after_fork_child() noexcept;

// Roots registered now (for tests and the debug log).
int kmp_roots_alive() noexcept;

}  // namespace apshim::omp_adapter
