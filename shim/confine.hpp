// CPU confinement: the job's threads run on as many CPUs as its allotment (plus the table's idle
// processors, APSHIM_USE_IDLE: shim/controller.cpp's usable_procs chooses the set given to apply()).
//
// The mechanism that enforces an allotment on every code shape (one long region of static loops,
// a BLAS library's own spin-waits, nested TBB waits, threads that wait for each other): every
// thread of the process stays alive and keeps its place in its team, but the kernel runs them
// only on the job's CPUs, so surplus threads time-share the job's own cores and never its
// neighbours'. Nothing is parked, so nothing that a teammate waits for can be stopped
// (shared/research/confinement-2core.md: within 5% of a true one-thread run on NPB and BOTS,
// except heavy taskwait programs). Parking at true safe points (adapters/) stays the cheaper path
// where it applies.
//
// Which CPUs: the table gives each job a set of processor indices (gat/placement.hpp), disjoint
// between jobs; index i is the i-th CPU of the process's original mask in topology order
// (package, last-level cache, core, hardware thread), modulo their count when APSHIM_P exceeds it.
// Of the original mask's CPUs, those the process's cpuset allows now: a cpuset that shrinks or
// grows while the job runs (a container's CPUs changed) is followed at the next cycle. A process
// started on every CPU of its cpuset (no taskset) follows it beyond its start too: threads let go
// ask for every CPU, as natively they run on every CPU the cpuset gains.
//
// Respected: a binding the user chose (OMP_PROC_BIND, OMP_PLACES, KMP_AFFINITY, GOMP_CPU_AFFINITY:
// confinement stays off, said once, in a program that links an OpenMP runtime, and from the
// moment a runtime loaded later binds its threads: bound_reason), a narrower mask from
// taskset/numactl/cpusets (confinement happens inside it), and the program's own
// sched_setaffinity/pthread_setaffinity_np (confinement stops for good where the program keeps a
// narrower mask, said once as a warning: off_by_program; threads it bound keep their masks; a
// mask it takes back, as hwloc's topology discovery does, is no binding: ProgramSetsMask). While
// confined, the process still sees its original mask (shim/cpu_hooks.cpp), so runtimes that size
// themselves from it are not narrowed by us, and child processes start with the original mask
// (shim/spawn_hooks.cpp).
#pragma once

#include <sched.h>
#include <sys/types.h>

#include "gat/placement.hpp"

namespace apshim::confine {

// At load, before anything else runs: the mask the process was started with.
void capture_at_load() noexcept;
// A thread of the process changes its CPU mask before capture_at_load ran (cpu_hooks.cpp): the
// mask the process was started with is read now, and capture_at_load keeps it. libgomp binds the
// initial thread to its first place in its own constructor (OMP_PROC_BIND, OMP_PLACES,
// GOMP_CPU_AFFINITY), which ld.so runs before the preloaded shim's: the shim read that one CPU as
// the process's, and a table it made had P = 1 (every job in it then held to one processor).
// Before the shim's constructors: nothing here but a system call.
void capture_before_binding() noexcept;
// How many CPUs the mask the process was started with has, of those its cpuset allows now
// (allowed(); 0 where it could not be read): default_processors()'s mask at the shim's start,
// where the main thread may no longer show it. (The controller thread counts its own: it runs on
// the original mask, or on every CPU, following the cpuset: reset_thread_mask.)
int original_cpus() noexcept;

// Turns confinement off for good (APSHIM_CONFINE=0), before the controller starts.
void disable(const char* why) noexcept;

// At start, when the shim is enabled and may confine: turns confinement off (off_by_fault) where
// the process's threads cannot be listed (no /proc), or the system forbids setting CPU affinity.
// (Either found later, /proc gone or an EPERM, turns it off then.) A seccomp filter (systemd's SystemCallFilter=~@resources,
// a sandbox) may answer EPERM, or kill the process, which is systemd's default action: the first
// confinement would kill the host. Asked only where the process runs under a filter
// (/proc/thread-self/status), by a child that runs nothing of the program's (shares no memory, no
// exit signal, no fork handlers) and tries the call on itself.
void check_system() noexcept;

// Why confinement must stay off, or null when it may be used (a user's binding, APSHIM_CONFINE=0).
const char* why_off() noexcept;
// The environment asks LLVM's OpenMP runtime (libomp, or Intel's libiomp5) to bind threads
// (OMP_PROC_BIND, OMP_PLACES, GOMP_CPU_AFFINITY, KMP_AFFINITY, as libomp reads them): why, or null.
// Confinement is off from the start only where the program links a runtime that binds for the
// environment (libgomp reads these differently: confine.cpp, gnu_binding): why_off; elsewhere
// from when one binds threads, if one ever does (a plugin, a Python module).
const char* libomp_binding_asked() noexcept;
// Whether it is off against the user's wish: the system refused (a seccomp filter that denies
// sched_setaffinity, a cpuset that no longer allows the job's CPUs, a mask that cannot be read),
// not a binding or an option the user chose. Said as a warning, since the allotment is then
// enforced by parking only, on the code shapes where that applies.
bool off_by_fault() noexcept;
// Whether it stopped because the program binds its threads itself and keeps the masks (its own
// pinning: GROMACS's `mdrun -pin auto` where it uses every CPU). Respected, but the user who ran
// the program under the shim may not know it pins, so it is said as a warning too, with the way
// out: the program's own switch for its pinning.
bool off_by_program() noexcept;

// Controller thread: every thread of the process but `skip_tid` (the controller) runs on the CPUs
// of `procs` from now on; threads created later are caught at the next call. A set that covers
// the whole original mask lifts the confinement. Returns false when it cannot (and stopped).
// It lists /proc/self/task only where a thread may be new or off the mask: the mask changed, a
// thread was created through pthread_create since the last listing (thread_created), or every
// kScanApplies calls, when it also reads the masks back (threads made by a raw clone, bindings no
// interposer saw). A thread created by a confined one inherits its mask, so only the rare thread
// cloned by an unconfined one without pthread_create waits for that scan. Listing every call cost
// a third of the controller's CPU (opendir and getdents of /proc: docs/enforcement.md, seventy-
// second session).
bool apply(const gat::ProcSet& procs, int P, pid_t skip_tid) noexcept;

// Any thread, from the pthread_create interposer (shim/thread_hooks.cpp), after a thread was
// created: the next apply() lists the process's threads. Lock-free, safe before the shim is up.
void thread_created() noexcept;
// How many threads were created through pthread_create so far (thread_created): a change says the
// threads are to be listed again (also process_cpu.hpp).
unsigned threads_created() noexcept;

// Controller thread: apply(procs, P) would run the job on fewer CPUs than its original mask.
bool restricts(const gat::ProcSet& procs, int P) noexcept;
// Controller thread: how many CPUs apply(procs, P) would run the job on, 0 where it would not
// restrict it (restricts() false).
int cpus_for(const gat::ProcSet& procs, int P) noexcept;

// Controller thread: the confinement check (confine_check.hpp) keeps the job unconfined for now,
// probing it or because confinement slows its hand-overs; nothing else may throttle it then
// (Host::parking_wanted). Cleared whenever confinement applies or is not wanted.
void suspend(bool on) noexcept;
bool suspended() noexcept;

// Every thread we confined goes back to the original mask; confinement is off until apply().
// `spread`: first each to one CPU in turn, the freed ones first, as a program starting its
// threads would spread them; the kernel itself takes tens of milliseconds to move cache-hot
// threads onto CPUs just freed (confine_check.hpp's probe lasts 15 ms).
void release(bool spread = false) noexcept;

// Controller thread, as a job's start begins (confine_check.hpp; nothing confined yet): every
// thread on the original mask but `skip_tid`, each to one CPU in turn for a moment, then back, as
// release(true) does. The kernel can leave the threads of a job that just started on one CPU for
// its whole start (a waiter is woken where its waker runs), and then the start, which is the
// job's first probe, reads them as slow as confined: LLVM's omp_for_collapse (clang) throttled
// made 13 thousand marks in its start in 1 run of 20 and 66-123 thousand in 11, against
// 135-192 thousand in all 20 with the spread (docs/enforcement.md, thirty-second session).
// Returns how many threads it moved.
int spread(pid_t skip_tid) noexcept;

// The program sets a thread's affinity itself (the interposed setaffinity functions). Held around
// the real call, so that no apply() runs between the call and its record:
//     ProgramSetsMask record;  rc = real(...);  if (rc == 0) record.done(tid, size, mask);
// `tid`: the thread bound (0: another thread, which cannot be named); `mask`, `size` bytes: the
// mask set (one that includes every CPU of the original mask binds nothing). A narrower mask that the program keeps stops
// confinement for good (the controller releases at its next cycle; threads the program bound
// keep their masks). One that it takes back is no binding: hwloc's topology discovery (GROMACS,
// Open MPI and other hwloc users) binds the calling thread to each CPU in turn and then restores
// its mask; the controller waits for the program's calls to settle, then confines again. The
// controller also reads the threads' masks back (a thread before it moves it, all of them every
// 20 cycles): a narrower mask that is not ours was set by a route no interposer sees (a library
// dlopen'ed RTLD_DEEPBIND, a raw system call) and counts as such a call.
class ProgramSetsMask {
public:
    ProgramSetsMask() noexcept;
    ~ProgramSetsMask();
    void done(pid_t tid, size_t size, const cpu_set_t* mask) noexcept;
    ProgramSetsMask(const ProgramSetsMask&) = delete;
    ProgramSetsMask& operator=(const ProgramSetsMask&) = delete;
};

// True while the program holds a thread of its own on a narrower mask, and for good once it kept
// one: its own masks are then the truth, for every answer the interposers give (no original mask
// shown, no CPUs made up for oneTBB).
bool program_bound() noexcept;

// True while some thread may be confined (the interposers then answer with the original mask).
bool active() noexcept;

// The original mask (as captured at load) as the kernel shows it now: its CPUs that the process's
// cpuset still allows, as the controller last read them. What the interposers show while confined.
const cpu_set_t& allowed() noexcept;

// The calling thread to the original mask / back to the confinement, around a spawn or an
// exec (a child process must start as it would without the shim). Async-signal-safe: one syscall.
void thread_to_original() noexcept;
void thread_to_confined() noexcept;

// The calling thread onto every CPU any thread of the process may use (the controller thread at
// its start: it may have been created by a thread the user bound to one CPU); onto every CPU
// where the process was started on its whole cpuset, which it then follows as it grows.
void reset_thread_mask() noexcept;

// Around posix_spawn/system/popen in the parent: the calling thread runs on the original mask,
// and the controller leaves every thread alone until spawn_end().
void spawn_begin() noexcept;
void spawn_end() noexcept;

// In a fork() child: the one thread back to the original mask; nothing is confined any more.
void after_fork_child() noexcept;

// The CPUs the job runs on now (empty when not confined), for the trace and `apshim status`.
int confined_cpus() noexcept;

// Controller thread, every cycle: the CPUs of the table processors `procs` (of P) are where the job
// would be confined. Where the threads are bound instead (a user's binding, the program's own:
// why_off), each keeps to its CPU, and the adapters choose which of them work by it (rank): under
// OMP_PROC_BIND two jobs' threads 0 share CPU 0, and two jobs held to their threads 0 left the
// other CPU idle. Elsewhere (confinement possible, or off by an option or a fault) nothing is
// published.
void publish_placement(const gat::ProcSet& procs, int P) noexcept;
// Any thread, lock-free: where publish_placement's CPUs are known, `cpu`'s rank among them, in the
// table's processor order (0 for the CPU of the job's lowest processor: the one it keeps when its
// allotment shrinks to 1, gat/placement.hpp), or kUnplaced for a CPU not among them; -1 where
// nothing is published (or `cpu` is not below kRankedCpus).
inline constexpr int kRankedCpus = 1024;
inline constexpr int kUnplaced = 253;
int rank(int cpu) noexcept;

}  // namespace apshim::confine
