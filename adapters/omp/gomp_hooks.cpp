// GCC libgomp (gcc -fopenmp programs on their own runtime), inside the program's threads.
// libgomp has no OMPT, so the shim times its entry points (research/libomp-hooks.md):
//  - GOMP_parallel* start every region (GCC 4.9+; GOMP_parallel_reductions, a region with a task
//    reduction: GCC 9+): cap num_threads (0 = default) for outermost regions, and run the outlined
//    function inside a work frame (thread_state.hpp);
//  - the waits (GOMP_barrier, GOMP_loop_end, GOMP_sections_end, GOMP_taskwait,
//    GOMP_taskgroup_end) run inside a wait frame; the region's end barrier lies outside the
//    outlined function, so it is idle already;
//  - GOMP_task: the task body runs through a wrapper that pushes a work frame (so tasks run
//    inside barriers count as work) and parks a thread beyond the allotment before the body;
//  - dynamic/guided chunk fetches (GOMP_loop_*_{start,next}): a thread beyond the allotment
//    parks before fetching (parking.hpp); a fetch that finds the loop done releases the parked;
//  - loops whose schedule libgomp resolves (GOMP_loop_*runtime_{start,next}, GOMP_loop_start):
//    not parked, the loop's end noted;
//  - all those fetches: a progress mark while timed (shim/confine_check.hpp);
//  - GOMP_parallel_sections, GOMP_sections_start and GOMP_sections2_start: a region of two or more
//    sections is counted, and spins once it stays open (whole_team.hpp: begin_sections_team).
// Taskloops, the barriers inside other constructs, ordered turns, critical sections and atomics'
// locks: gomp_constructs.cpp. Not covered: the GOMP 1.0 pair GOMP_parallel_start/end (compilers
// before GCC 4.9).
#include <alloca.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "adapters/common/next_fn.hpp"
#include "adapters/omp/gomp_hooks.hpp"
#include "adapters/omp/gomp_spin.hpp"
#include "adapters/omp/omp_state.hpp"
#include "adapters/omp/parking.hpp"
#include "adapters/omp/thread_state.hpp"
#include "adapters/omp/whole_team.hpp"

namespace apshim::omp_adapter {
namespace {

using Fn = void (*)(void*);
using IntFn = int (*)();
using ParallelFn = void (*)(Fn, void*, unsigned, unsigned);

NextFn<ParallelFn> next_GOMP_parallel{"GOMP_parallel", &g_gomp_state.copies};
OmpQueries<ParallelFn> gomp{next_GOMP_parallel};
APSHIM_RESOLVE_AT_LOAD(next_GOMP_parallel)
APSHIM_RESOLVE_AT_LOAD(gomp)

__attribute__((tls_model("initial-exec"))) thread_local ThreadState t_state;

inline bool hooks_on() noexcept { return gomp_hooks_on(); }  // gomp_hooks.hpp says when they are off

// With hooks off for two copies: an outermost region of either still tells the controller the
// job runs OpenMP (a fair share, as for an unmeasured libomp: omp_adapter.cpp).
inline void passthrough_fork(unsigned num_threads) noexcept {
    if (apshim::host().enabled() && g_gomp_state.copies.several())
        note_fork(g_gomp_state, num_threads > 0 ? static_cast<int>(num_threads) : apshim::host().processors());
}

bool on() noexcept { return hooks_on() && gomp.level.get() && gomp.thread_num.get(); }

void park_here() noexcept {
    auto thread_num = gomp.thread_num.get();
    auto get_level = gomp.level.get();
    if (thread_num && get_level) park_if_surplus(g_gomp_state, t_state, thread_num(), get_level());
    resume_timing(g_gomp_state, t_state);
}

struct Region {
    // First: GOMP_parallel_reductions reads the region's task reductions through the first word
    // of the data it is handed (`*(uintptr_t**)data`), so that word is a copy of the program's.
    void* reductions;
    Fn fn;
    void* data;
    int asked;  // whole_team_asked(): the team it asked for where it may get fewer, else 0
    // Which fork this is (next_team_token): the token its threads share (ThreadCounters::team).
    // Not the Region's address: the regions a loop forks have the same one, and a thread yet to
    // start the new one read as a teammate already at its barrier (parking.hpp: a first arrival
    // then left BOTS uts's root task, made in a `single nowait`, to a teammate not there yet).
    std::uintptr_t token;
};

// One token per outermost fork, never 0.
std::uintptr_t next_team_token() noexcept {
    static std::atomic<std::uintptr_t> last{0};
    return last.fetch_add(1, std::memory_order_relaxed) + 1;
}

// Reads an object another thread wrote before libgomp handed it over (a Region on the forking
// thread's stack, a task's header in the block libgomp copied). libgomp's barriers and queues
// order the write before this read, but libgomp is not instrumented, so ThreadSanitizer cannot
// see that and would report every region (tests/README-sanitizers.md); this one read is left out
// of its checks. Field by field: a struct copy could become a memcpy, which TSan intercepts.
// noipa, not just noinline: gcc would otherwise move the loads into the (instrumented) caller.
#if defined(__clang__)
#define APSHIM_UNCHECKED_READ __attribute__((noinline, no_sanitize("thread")))
#else
#define APSHIM_UNCHECKED_READ __attribute__((noipa, no_sanitize("thread")))
#endif
APSHIM_UNCHECKED_READ Region handed_over(const Region* p) noexcept {
    return Region{p->reductions, p->fn, p->data, p->asked, p->token};
}

// On a thread of an outermost region that asked for `asked` threads: the primary counts the
// arrivals of those it did not get (thread_state.hpp: note_missing_arrivals).
void note_team_arrivals(int asked) noexcept {
    auto thread_num = gomp.thread_num.get();
    auto num_threads = gomp.num_threads.get();
    if (thread_num && num_threads && thread_num() == 0) note_missing_arrivals(t_state, asked, num_threads());
}

void run_region(void* p) {
    Region r = handed_over(static_cast<const Region*>(p));
    auto get_level = gomp.level.get();
    bool outermost = get_level && get_level() == 1;
    {
        Frame work(g_gomp_state, t_state, /*wait=*/false);
        if (outermost) {
            region_started(g_gomp_state, t_state, reinterpret_cast<const void*>(r.token));  // one per fork
            auto num_threads = gomp.num_threads.get();
            t_state.team_size = num_threads ? num_threads() : 0;
        }
        r.fn(r.data);
    }
    // The region's end barrier follows inside libgomp, out of reach: this is the thread's
    // arrival there (gcc folds a single's barrier into it, as in `parallel` + `single`), counted
    // for the idle check: a program of many short static regions makes no other progress mark
    // (tesseract's LSTM, shim/idle_check.hpp). Not a mark for the confinement check
    // (adapters/common/busy.hpp, region_ends).
    note_region_end(g_gomp_state, t_state);
    if (outermost) {
        if (r.asked > 0) note_team_arrivals(r.asked);
        Frame wait(g_gomp_state, t_state, /*wait=*/true);
        at_barrier(g_gomp_state, t_state);
    }
}

// The team for a region about to start, capped by the allotment when outermost. Lives for the
// region: the threads it reserved (omp_state.hpp: reserve_team) go back when it ends. A region
// forked from `site` in a library that needs whole teams, or a `parallel sections` of `sections`
// (0: not one) that may meet (whole_team.hpp), is not capped, and libgomp's own dynamic adjustment
// is off for it: the forking thread's dyn-var, back on at the end (libgomp sizes the team from it
// when the region starts).
class OutermostTeam {
public:
    OutermostTeam(Fn fn, void* data, unsigned num_threads, const void* site, unsigned sections = 0,
                  void* reductions = nullptr)
        : region_{reductions, fn, data, 0, next_team_token()}, size_(num_threads) {
        if (!gomp.outermost()) return;
        mark_external(g_gomp_state, t_state);  // the forking thread (busy.hpp)
        bool opted_in = shrink_allowed_by_user();
        ForkIcvs icvs = gomp.icvs(/*need_max=*/opted_in || num_threads == 0);
        const bool promised = !(icvs.dynamic || opted_in);  // before keep_whole_team withholds both
        int request = static_cast<int>(num_threads);
        const TeamNeed need = fork_team_need(site, sections);
        dynamic_back_ = keep_whole_team(need, g_gomp_state, request, icvs, opted_in, gomp.set_dynamic,
                                        /*can_turn_back=*/true);
        region_.asked = whole_team_asked(request, icvs, opted_in);
        int n = reserve_team(g_gomp_state, request, icvs, opted_in, reserved_);
        int team = n > 0 ? n : icvs.max_threads;
        note_fork(g_gomp_state, team);
        spinning_ = begin_spinning_team(g_gomp_state, team, promised && spins_at_meetings(need), /*sees_end=*/true);
        // A sections region's team: the threads that run its sections at once.
        if (sections_may_meet(sections))
            sections_ = begin_sections_team(g_gomp_state, std::min(team, static_cast<int>(sections)));
        if (n > 0) size_ = static_cast<unsigned>(n);
        t_open_team = this;
    }
    ~OutermostTeam() {
        if (t_open_team == this) t_open_team = nullptr;
        if (spinning_) end_spinning_team(g_gomp_state);
        if (sections_) end_sections_team(g_gomp_state);
        release_team(g_gomp_state, reserved_);
        if (dynamic_back_) dynamic_back_(1);
    }
    OutermostTeam(const OutermostTeam&) = delete;
    OutermostTeam& operator=(const OutermostTeam&) = delete;
    unsigned size() const { return size_; }
    // What run_region() runs on every thread of the team (the region's data for libgomp).
    Region* region() { return &region_; }
    // On the forking thread, the region open: a sections construct of `sections` inside it
    // (`parallel` + `sections`, as gcc compiles `parallel sections` with a reduction): its team
    // is counted until the region ends, as a combined one's is from its fork.
    void sections_begin(unsigned sections) {
        if (sections_ || !sections_may_meet(sections)) return;
        auto num_threads = gomp.num_threads.get();
        int team = num_threads ? num_threads() : static_cast<int>(size_);
        sections_ = begin_sections_team(g_gomp_state, std::min(team, static_cast<int>(sections)));
    }
    // The outermost region this thread forked and still runs (null: none).
    static thread_local OutermostTeam* t_open_team;

private:
    Region region_;
    unsigned size_;
    int reserved_ = 0;
    bool spinning_ = false;  // a team of a library that spins at its meetings (whole_team.hpp)
    bool sections_ = false;  // a sections region whose sections may meet (begin_sections_team)
    SetDynamic dynamic_back_ = nullptr;  // libgomp's omp_set_dynamic, where dyn-var is off for the region
};

__attribute__((tls_model("initial-exec"))) thread_local OutermostTeam* OutermostTeam::t_open_team = nullptr;

// Task bodies. libgomp copies a task's data block (memcpy, or the compiler's cpyfn for C++
// firstprivates) into the task and later calls fn(copy). The shim hands libgomp a larger block,
// a TaskHeader then the program's data at `offset`, and its own fn/cpyfn that unwrap it.
struct TaskHeader {
    Fn fn;
    void (*cpyfn)(void*, void*);
    void* src;  // the program's data block (read by cpyfn only, while GOMP_task runs)
    long offset;
    bool final;  // made with final(true): libgomp runs every task made inside it at once
};

APSHIM_UNCHECKED_READ TaskHeader handed_over(const TaskHeader* p) noexcept {
    return TaskHeader{p->fn, p->cpyfn, p->src, p->offset, p->final};
}

// Depth of the frame of the final task this thread runs (0: none): every task made above it is
// included, run at once by libgomp in the making thread, and a taskwait there has nothing to wait
// for; both are part of the frame that makes them.
__attribute__((tls_model("initial-exec"))) thread_local int t_final_depth = 0;
inline bool in_final_task() noexcept { return t_final_depth > 0 && t_final_depth <= t_state.depth; }
// Tasks this thread runs at once now (at allotment 1: inline_tasks), which have no frame: the
// tasks they make run at once too, and their taskwaits have little or nothing to wait for.
__attribute__((tls_model("initial-exec"))) thread_local int t_at_once = 0;
inline bool in_included_task() noexcept { return t_at_once > 0 || in_final_task(); }

// No parking before a task body: the thread has dequeued the task, and a teammate may be
// waiting for it in a taskwait (BOTS under throttling: minutes instead of a second).
void run_task(void* p) {
    TaskHeader h = handed_over(static_cast<const TaskHeader*>(p));
    Frame work(g_gomp_state, t_state, /*wait=*/false, /*task=*/true);
    note_progress(g_gomp_state, t_state);  // made and run: each thread's progress is marked
    if (t_state.counters) bump(t_state.counters->handed_begun);
    if (g_gomp_state.held_for_queue.load(std::memory_order_relaxed)) tell_held_if_drained(g_gomp_state, t_state);
    bool outer_final = h.final && t_final_depth == 0;
    if (outer_final) t_final_depth = t_state.depth;
    struct EndFinal {
        bool on;
        ~EndFinal() {
            if (on) t_final_depth = 0;
        }
    } end_final{outer_final};
    h.fn(static_cast<char*>(p) + h.offset);
}

void copy_task(void* dst, void* src) {
    auto* from = static_cast<TaskHeader*>(src);
    std::memcpy(dst, from, sizeof(TaskHeader));
    from->cpyfn(static_cast<char*>(dst) + from->offset, from->src);
}

constexpr unsigned kTaskFlagDetach = 1u << 13;  // GOMP_TASK_FLAG_DETACH: libgomp writes into data
constexpr unsigned kTaskFlagFinal = 2u;         // GOMP_TASK_FLAG_FINAL
// GOMP_TASK_FLAG_UNTIED, _FINAL, _MERGEABLE, _PRIORITY: a task with no other flag (no depend, no
// detach, no reduction) may run at once. libgomp runs one at once itself when if_clause is false.
constexpr unsigned kTaskFlagsInlinable = 1u | 2u | 4u | 16u;
constexpr long kMaxWrappedTaskData = 4096;      // the copy lives on this thread's stack

}  // namespace

const void* gomp_first_called() noexcept { return reinterpret_cast<const void*>(next_GOMP_parallel.get_if_known()); }

ThreadState& gomp_thread_state() noexcept { return t_state; }

}  // namespace apshim::omp_adapter

using namespace apshim::omp_adapter;
using apshim::NextFn;

APSHIM_EXPORT void GOMP_parallel(void (*fn)(void*), void* data, unsigned num_threads, unsigned flags) {
    auto real_fn = apshim::must_exist(next_GOMP_parallel.for_caller(APSHIM_CALLER), "GOMP_parallel");
    if (!hooks_on()) {
        passthrough_fork(num_threads);
        return real_fn(fn, data, num_threads, flags);
    }
    OutermostTeam team(fn, data, num_threads, APSHIM_CALLER);
    real_fn(&run_region, team.region(), team.size(), flags);
}

namespace {
NextFn<void (*)(Fn, void*, unsigned, unsigned, unsigned)> next_GOMP_parallel_sections{"GOMP_parallel_sections",
                                                                                     &g_gomp_state.copies};
APSHIM_RESOLVE_AT_LOAD(next_GOMP_parallel_sections)
}
APSHIM_EXPORT void GOMP_parallel_sections(void (*fn)(void*), void* data, unsigned num_threads, unsigned count,
                                          unsigned flags) {
    auto real_fn = apshim::must_exist(next_GOMP_parallel_sections.for_caller(APSHIM_CALLER), "GOMP_parallel_sections");
    if (!hooks_on()) {
        passthrough_fork(num_threads);
        return real_fn(fn, data, num_threads, count, flags);
    }
    OutermostTeam team(fn, data, num_threads, APSHIM_CALLER, count);
    real_fn(&run_region, team.region(), team.size(), count, flags);
}

// `parallel` with a task reduction (GCC 9 and later): libgomp registers the reductions for the team
// it forms, read through the data's first word, which region() carries (Region::reductions).
namespace {
NextFn<unsigned (*)(Fn, void*, unsigned, unsigned)> next_GOMP_parallel_reductions{"GOMP_parallel_reductions",
                                                                                 &g_gomp_state.copies};
APSHIM_RESOLVE_AT_LOAD(next_GOMP_parallel_reductions)
}
APSHIM_EXPORT unsigned GOMP_parallel_reductions(void (*fn)(void*), void* data, unsigned num_threads, unsigned flags) {
    auto real_fn = apshim::must_exist(next_GOMP_parallel_reductions.for_caller(APSHIM_CALLER), "GOMP_parallel_reductions");
    if (!hooks_on()) {
        passthrough_fork(num_threads);
        return real_fn(fn, data, num_threads, flags);
    }
    OutermostTeam team(fn, data, num_threads, APSHIM_CALLER, 0, *static_cast<void**>(data));
    return real_fn(&run_region, team.region(), team.size(), flags);
}

// `parallel for` with a schedule is one combined call (GOMP 4.0): same treatment as
// GOMP_parallel, the loop bounds passed through.
#define APSHIM_GOMP_PARALLEL_LOOP(name)                                                                      \
    APSHIM_GOMP_NEXT_FN(void (*)(Fn, void*, unsigned, long, long, long, long, unsigned), name)               \
    APSHIM_EXPORT void name(void (*fn)(void*), void* data, unsigned n, long start, long end, long incr,      \
                            long chunk, unsigned flags) {                                                    \
        auto real_fn = apshim::must_exist(next_##name.for_caller(APSHIM_CALLER), #name);                     \
        if (!hooks_on()) {                                                                                   \
            passthrough_fork(n);                                                                             \
            return real_fn(fn, data, n, start, end, incr, chunk, flags);                                     \
        }                                                                                                    \
        OutermostTeam team(fn, data, n, APSHIM_CALLER);                                                      \
        real_fn(&run_region, team.region(), team.size(), start, end, incr, chunk, flags);                    \
    }
#define APSHIM_GOMP_PARALLEL_LOOP_RUNTIME(name)                                                              \
    APSHIM_GOMP_NEXT_FN(void (*)(Fn, void*, unsigned, long, long, long, unsigned), name)                     \
    APSHIM_EXPORT void name(void (*fn)(void*), void* data, unsigned n, long start, long end, long incr,      \
                            unsigned flags) {                                                                \
        auto real_fn = apshim::must_exist(next_##name.for_caller(APSHIM_CALLER), #name);                     \
        if (!hooks_on()) {                                                                                   \
            passthrough_fork(n);                                                                             \
            return real_fn(fn, data, n, start, end, incr, flags);                                            \
        }                                                                                                    \
        OutermostTeam team(fn, data, n, APSHIM_CALLER);                                                      \
        real_fn(&run_region, team.region(), team.size(), start, end, incr, flags);                           \
    }
APSHIM_GOMP_PARALLEL_LOOP(GOMP_parallel_loop_static)
APSHIM_GOMP_PARALLEL_LOOP(GOMP_parallel_loop_dynamic)
APSHIM_GOMP_PARALLEL_LOOP(GOMP_parallel_loop_guided)
APSHIM_GOMP_PARALLEL_LOOP(GOMP_parallel_loop_nonmonotonic_dynamic)
APSHIM_GOMP_PARALLEL_LOOP(GOMP_parallel_loop_nonmonotonic_guided)
APSHIM_GOMP_PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_runtime)
APSHIM_GOMP_PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_nonmonotonic_runtime)
APSHIM_GOMP_PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_maybe_nonmonotonic_runtime)

// A sections construct inside an outermost region (`parallel` + `sections`): on the forking thread,
// where it meets two or more sections, the region's team is counted (whole_team.hpp:
// begin_sections_team). GOMP_sections2_start: the same with reductions (GCC 11 and later).
namespace {
void note_sections(unsigned count) noexcept {
    OutermostTeam* team = OutermostTeam::t_open_team;
    if (!team || !hooks_on()) return;
    auto get_level = gomp.level.get();
    if (get_level && get_level() == 1) team->sections_begin(count);
}
}  // namespace
APSHIM_GOMP_NEXT_FN(unsigned (*)(unsigned), GOMP_sections_start)
APSHIM_EXPORT unsigned GOMP_sections_start(unsigned count) {
    auto real_fn = apshim::must_exist(next_GOMP_sections_start.for_caller(APSHIM_CALLER), "GOMP_sections_start");
    note_sections(count);
    return real_fn(count);
}
APSHIM_GOMP_NEXT_FN(unsigned (*)(unsigned, std::uintptr_t*, void**), GOMP_sections2_start)
APSHIM_EXPORT unsigned GOMP_sections2_start(unsigned count, std::uintptr_t* reductions, void** mem) {
    auto real_fn = apshim::must_exist(next_GOMP_sections2_start.for_caller(APSHIM_CALLER), "GOMP_sections2_start");
    note_sections(count);
    return real_fn(count, reductions, mem);
}

// Waits: the whole call is idle time, except task bodies run inside it (they push work).
// Untimed, a wait nested in a frame goes to libgomp with no frame of its own (plain_nested_wait:
// fib's taskwait per task cost 154 instructions with its frame, tests/cost).
// `implicit_hold`: a taskwait in a thread's share of an outermost region (engaged: in its implicit
// task, or in a task it runs there) may first leave the queued tasks to teammates on the job's
// CPUs (parking.hpp: at_implicit_taskwait; timed only, where the queue is counted). Not told by
// the frames: a task made untimed has none (GOMP_task), and a root task taken in the barrier
// read as its thread's implicit task, held at its taskwait while its teammate slept in the barrier
// (BOTS health beside sort: 0.6 s without work).
namespace {
template <bool implicit_hold, typename F, typename... A>
__attribute__((noinline)) auto framed_wait(F real_fn, A... args) {
    if (!hooks_on()) return real_fn(args...);
    const bool implicit = implicit_hold && t_state.counters && t_state.counters->engaged.load(std::memory_order_relaxed);
    Frame wait(g_gomp_state, t_state, /*wait=*/true);
    note_progress(g_gomp_state, t_state);
    if (implicit && g_gomp_state.timing.load(std::memory_order_relaxed)) {
        auto get_level = gomp.level.get();
        if (get_level && get_level() == 1) at_implicit_taskwait(g_gomp_state, t_state);
    }
    return real_fn(args...);
}
}  // namespace
#define APSHIM_GOMP_WAIT(R, name, params, args, implicit_hold)                                               \
    APSHIM_GOMP_NEXT_FN(R(*) params, name)                                                                   \
    APSHIM_EXPORT R name params {                                                                            \
        const void* site = APSHIM_CALLER;                                                                    \
        auto real_fn = next_##name.known_for(site);                                                          \
        if (real_fn && (plain_nested_wait(g_gomp_state, t_state) || in_included_task())) [[likely]]           \
            return real_fn args;                                                                             \
        real_fn = apshim::must_exist(next_##name.for_caller(site), #name);                                   \
        return framed_wait<implicit_hold>(real_fn APSHIM_COMMA_ARGS args);                                    \
    }
// (a, b) -> , a, b   and   () -> nothing: the arguments after framed_wait's first.
#define APSHIM_COMMA_ARGS(...) __VA_OPT__(, ) __VA_ARGS__
// Barriers: the same, and a thread beyond what the allotment admits waits before entering
// (parking.hpp: at_barrier).
#define APSHIM_GOMP_BARRIER(R, name)                                                                         \
    APSHIM_GOMP_NEXT_FN(R (*)(), name)                                                                       \
    APSHIM_EXPORT R name() {                                                                                 \
        auto real_fn = apshim::must_exist(next_##name.for_caller(APSHIM_CALLER), #name);                     \
        if (!hooks_on()) return real_fn();                                                                   \
        Frame wait(g_gomp_state, t_state, /*wait=*/true);                                                    \
        note_progress(g_gomp_state, t_state);                                                                \
        auto get_level = gomp.level.get();                                                                   \
        if (!get_level || get_level() != 1) return real_fn();                                                \
        at_barrier(g_gomp_state, t_state);                                                                   \
        struct Reengage {                                                                                    \
            ~Reengage() { set_engaged(g_gomp_state, t_state, true); }                                        \
        } reengage;                                                                                          \
        return real_fn();                                                                                    \
    }
APSHIM_GOMP_BARRIER(void, GOMP_barrier)
APSHIM_GOMP_BARRIER(bool, GOMP_barrier_cancel)
APSHIM_GOMP_BARRIER(void, GOMP_loop_end)
APSHIM_GOMP_BARRIER(bool, GOMP_loop_end_cancel)
APSHIM_GOMP_BARRIER(void, GOMP_sections_end)
APSHIM_GOMP_BARRIER(bool, GOMP_sections_end_cancel)
APSHIM_GOMP_WAIT(void, GOMP_taskwait, (), (), true)
APSHIM_GOMP_WAIT(void, GOMP_taskwait_depend, (void** depend), (depend), false)
APSHIM_GOMP_WAIT(void, GOMP_taskgroup_end, (), (), false)

namespace {
using TaskFn = void (*)(Fn, void*, void (*)(void*, void*), long, long, bool, unsigned, void**, int, void*);
NextFn<TaskFn> next_GOMP_task{"GOMP_task", &g_gomp_state.copies};
APSHIM_RESOLVE_AT_LOAD(next_GOMP_task)

// Timed: the task goes to libgomp wrapped (run_task pushes its frame).
__attribute__((noinline)) void wrapped_task(TaskFn real_fn, void (*fn)(void*), void* data, void (*cpyfn)(void*, void*),
                                            long arg_size, long arg_align, bool if_clause, unsigned flags,
                                            void** depend, int priority, void* detach) {
    long align = arg_align > static_cast<long>(alignof(TaskHeader)) ? arg_align : alignof(TaskHeader);
    long offset = (static_cast<long>(sizeof(TaskHeader)) + align - 1) & ~(align - 1);
    long size = offset + arg_size;
    // Without cpyfn libgomp memcpys `size` bytes (or runs fn on the block in place), so the block
    // carries the data; with cpyfn only copy_task reads it, and the header suffices.
    auto* block = static_cast<char*>(alloca(static_cast<std::size_t>(cpyfn ? offset : size) + align));
    block = reinterpret_cast<char*>((reinterpret_cast<std::uintptr_t>(block) + align - 1) & ~static_cast<std::uintptr_t>(align - 1));
    TaskHeader h{fn, cpyfn, data, offset, (flags & kTaskFlagFinal) != 0};
    std::memcpy(block, &h, sizeof h);
    if (!cpyfn && arg_size > 0) std::memcpy(block + offset, data, static_cast<std::size_t>(arg_size));
    if (t_state.counters) apshim::bump(t_state.counters->tasks_handed);  // queued (or run now, inside: run_task)
    real_fn(&run_task, block, cpyfn ? &copy_task : nullptr, size, align, if_clause, flags, depend, priority, detach);
}

// At allotment 1 a task made inside a task may run at once (adapter.hpp: inline_tasks): one with
// no flag beyond kTaskFlagsInlinable and no dependences.
inline bool may_run_at_once(unsigned flags, void** depend) noexcept {
    return g_gomp_state.tasks_at_once.load(std::memory_order_relaxed) && (flags & ~kTaskFlagsInlinable) == 0 &&
           depend == nullptr;
}

// A task run at once in this thread (ours at allotment 1, an if(0) task, any task made inside a
// final task) is part of the frame that makes it, whose time is work already: it needs no
// wrapper and no frame of its own. BOTS fib with final or if clauses (gcc, millions of included
// tasks) took 1.0 s at allotment 1 against 0.2 s with one thread, paying for a wrapper each.
// Ours runs as an if(0) task, counted in t_at_once while it runs. Every task is two progress
// marks, made and run, wherever it runs (the caller marks it made): the confinement check compares
// marks of runs that schedule tasks differently (at once on one CPU, queued on two).
inline void run_at_once(TaskFn real_fn, void (*fn)(void*), void* data, void (*cpyfn)(void*, void*), long arg_size,
                        long arg_align, unsigned flags, int priority, void* detach) {
    count_mark(t_state.counters);
    ++t_at_once;
    real_fn(fn, data, cpyfn, arg_size, arg_align, false, flags, nullptr, priority, detach);
    --t_at_once;
}

// Everything but the common case below.
__attribute__((noinline)) void task_slow(const void* site, void (*fn)(void*), void* data, void (*cpyfn)(void*, void*), long arg_size,
                                         long arg_align, bool if_clause, unsigned flags, void** depend, int priority,
                                         void* detach) {
    auto real_fn = apshim::must_exist(next_GOMP_task.for_caller(site), "GOMP_task");
    if (hooks_on()) {
        made_task(g_gomp_state, t_state);
        note_progress(g_gomp_state, t_state);
    }
    if (!g_gomp_state.timing.load(std::memory_order_relaxed) || !on() || (flags & kTaskFlagDetach) || arg_size < 0 ||
        arg_size > kMaxWrappedTaskData || arg_align < 1 || (arg_align & (arg_align - 1)) != 0)
        return real_fn(fn, data, cpyfn, arg_size, arg_align, if_clause, flags, depend, priority, detach);
    // Only a task made inside a task runs at once; one made by an implicit task stays queued,
    // where the program's own code may go on beside it.
    if (may_run_at_once(flags, depend) && in_explicit_task(t_state))
        return run_at_once(real_fn, fn, data, cpyfn, arg_size, arg_align, flags, priority, detach);
    if (!if_clause || in_final_task()) {  // included: libgomp runs it now
        count_mark(t_state.counters);
        return real_fn(fn, data, cpyfn, arg_size, arg_align, if_clause, flags, depend, priority, detach);
    }
    wrapped_task(real_fn, fn, data, cpyfn, arg_size, arg_align, if_clause, flags, depend, priority, detach);
}
}  // namespace

// Untimed (the job runs no more threads than its allotment: busy.hpp) nothing reads a task's
// frame, so the task goes to libgomp as the program made it: no trampoline, no copy, no frame,
// and in the common case (its thread made a task in this region before) a plain tail call with
// nothing to save (tests/cost: 393 added instructions a task before, 123 now). A task made
// now and run after timing came back has no frame: its time reads as that of the frame below it
// until its next taskwait or its end, and tasks it makes are not run at once; both cost only
// accuracy, for that one task.
APSHIM_EXPORT void GOMP_task(void (*fn)(void*), void* data, void (*cpyfn)(void*, void*), long arg_size,
                             long arg_align, bool if_clause, unsigned flags, void** depend, int priority,
                             void* detach) {
    const void* site = APSHIM_CALLER;
    auto real_fn = next_GOMP_task.known_for(site);  // null until resolved: task_slow resolves it
    if (real_fn && !g_gomp_state.timing.load(std::memory_order_relaxed) &&
        (made_task_noted(g_gomp_state, t_state) || !hooks_on())) [[likely]]
        return real_fn(fn, data, cpyfn, arg_size, arg_align, if_clause, flags, depend, priority, detach);
    // Timed, inside a task run at once: this one runs at once too (or is included by libgomp in a
    // final task), with no wrapper (run_at_once says why), and without task_slow's checks, which
    // a 0.2 s BOTS fib paid a million times. (Inside one, the thread is in an explicit task.)
    if (real_fn && made_task_noted(g_gomp_state, t_state)) {
        if (t_at_once > 0 && may_run_at_once(flags, depend)) {
            count_mark(t_state.counters);  // made (run_at_once marks it run)
            return run_at_once(real_fn, fn, data, cpyfn, arg_size, arg_align, flags, priority, detach);
        }
        if (in_final_task()) {  // included by libgomp: made and run now
            count_mark(t_state.counters);
            count_mark(t_state.counters);
            return real_fn(fn, data, cpyfn, arg_size, arg_align, if_clause, flags, depend, priority, detach);
        }
    }
    task_slow(site, fn, data, cpyfn, arg_size, arg_align, if_clause, flags, depend, priority, detach);
}

// Chunk fetches: a progress mark each, and the loop's end noted after (a fetch that finds it done
// releases the parked). `parks`: a thread beyond the allotment parks before the fetch.
//  - Dynamic and guided loops park: a thread there holds no iteration, and its teammates take
//    the rest.
//  - Loops whose schedule libgomp resolves itself never park: `schedule(runtime)` (run-sched-var,
//    OMP_SCHEDULE; libgomp's default is dynamic,1, so such a loop fetches each iteration), plain,
//    nonmonotonic and maybe-nonmonotonic (GCC 9+'s names for it) alike, and GCC 9+'s
//    GOMP_loop_start (loops with a task reduction or a conditional lastprivate, any schedule).
//    What they resolve to is libgomp's: static hands each thread its own chunks, and a thread
//    parked before one would hold iterations no teammate can take. kmp_hooks.cpp leaves libomp's
//    runtime loops so too; confinement enforces the allotment there. Before the forty-eighth
//    session these were not hooked, and such a loop made no mark until its barrier.
// istart null (GOMP_loop_start): a loop for which only the reductions are set up, no fetch.
#define APSHIM_GOMP_LOOP_FETCH(name, parks, params, args)                                                   \
    APSHIM_GOMP_NEXT_FN(bool(*) params, name)                                                                \
    APSHIM_EXPORT bool name params {                                                                         \
        auto real_fn = apshim::must_exist(next_##name.for_caller(APSHIM_CALLER), #name);                     \
        if (istart == nullptr || !on()) return real_fn args;                                                 \
        if (parks)                                                                                           \
            park_here();                                                                                     \
        else                                                                                                 \
            resume_timing(g_gomp_state, t_state);                                                            \
        note_progress(g_gomp_state, t_state);                                                                \
        bool more = real_fn args;                                                                            \
        if (!more) loop_exhausted(g_gomp_state);                                                             \
        return more;                                                                                         \
    }
#define APSHIM_GOMP_NEXT(name, parks, T) APSHIM_GOMP_LOOP_FETCH(name, parks, (T * istart, T * iend), (istart, iend))
#define APSHIM_GOMP_START(name)                                                                              \
    APSHIM_GOMP_LOOP_FETCH(name, true, (long start, long end, long incr, long chunk, long* istart, long* iend), \
                           (start, end, incr, chunk, istart, iend))
#define APSHIM_GOMP_START_ULL(name)                                                                          \
    APSHIM_GOMP_LOOP_FETCH(name, true,                                                                       \
                           (bool up, unsigned long long start, unsigned long long end, unsigned long long incr, \
                            unsigned long long chunk, unsigned long long* istart, unsigned long long* iend),    \
                           (up, start, end, incr, chunk, istart, iend))
#define APSHIM_GOMP_RUNTIME_START(name)                                                                      \
    APSHIM_GOMP_LOOP_FETCH(name, false, (long start, long end, long incr, long* istart, long* iend),         \
                           (start, end, incr, istart, iend))
#define APSHIM_GOMP_RUNTIME_START_ULL(name)                                                                  \
    APSHIM_GOMP_LOOP_FETCH(name, false,                                                                      \
                           (bool up, unsigned long long start, unsigned long long end, unsigned long long incr, \
                            unsigned long long* istart, unsigned long long* iend),                              \
                           (up, start, end, incr, istart, iend))
APSHIM_GOMP_NEXT(GOMP_loop_dynamic_next, true, long)
APSHIM_GOMP_NEXT(GOMP_loop_guided_next, true, long)
APSHIM_GOMP_NEXT(GOMP_loop_nonmonotonic_dynamic_next, true, long)
APSHIM_GOMP_NEXT(GOMP_loop_nonmonotonic_guided_next, true, long)
APSHIM_GOMP_NEXT(GOMP_loop_ull_dynamic_next, true, unsigned long long)
APSHIM_GOMP_NEXT(GOMP_loop_ull_guided_next, true, unsigned long long)
APSHIM_GOMP_NEXT(GOMP_loop_ull_nonmonotonic_dynamic_next, true, unsigned long long)
APSHIM_GOMP_NEXT(GOMP_loop_ull_nonmonotonic_guided_next, true, unsigned long long)
APSHIM_GOMP_START(GOMP_loop_dynamic_start)
APSHIM_GOMP_START(GOMP_loop_guided_start)
APSHIM_GOMP_START(GOMP_loop_nonmonotonic_dynamic_start)
APSHIM_GOMP_START(GOMP_loop_nonmonotonic_guided_start)
APSHIM_GOMP_START_ULL(GOMP_loop_ull_dynamic_start)
APSHIM_GOMP_START_ULL(GOMP_loop_ull_guided_start)
APSHIM_GOMP_START_ULL(GOMP_loop_ull_nonmonotonic_dynamic_start)
APSHIM_GOMP_START_ULL(GOMP_loop_ull_nonmonotonic_guided_start)
APSHIM_GOMP_NEXT(GOMP_loop_runtime_next, false, long)
APSHIM_GOMP_NEXT(GOMP_loop_nonmonotonic_runtime_next, false, long)
APSHIM_GOMP_NEXT(GOMP_loop_maybe_nonmonotonic_runtime_next, false, long)
APSHIM_GOMP_NEXT(GOMP_loop_ull_runtime_next, false, unsigned long long)
APSHIM_GOMP_NEXT(GOMP_loop_ull_nonmonotonic_runtime_next, false, unsigned long long)
APSHIM_GOMP_NEXT(GOMP_loop_ull_maybe_nonmonotonic_runtime_next, false, unsigned long long)
APSHIM_GOMP_RUNTIME_START(GOMP_loop_runtime_start)
APSHIM_GOMP_RUNTIME_START(GOMP_loop_nonmonotonic_runtime_start)
APSHIM_GOMP_RUNTIME_START(GOMP_loop_maybe_nonmonotonic_runtime_start)
APSHIM_GOMP_RUNTIME_START_ULL(GOMP_loop_ull_runtime_start)
APSHIM_GOMP_RUNTIME_START_ULL(GOMP_loop_ull_nonmonotonic_runtime_start)
APSHIM_GOMP_RUNTIME_START_ULL(GOMP_loop_ull_maybe_nonmonotonic_runtime_start)
APSHIM_GOMP_LOOP_FETCH(GOMP_loop_start, false,
                       (long start, long end, long incr, long sched, long chunk, long* istart, long* iend,
                        std::uintptr_t* reductions, void** mem),
                       (start, end, incr, sched, chunk, istart, iend, reductions, mem))
APSHIM_GOMP_LOOP_FETCH(GOMP_loop_ull_start, false,
                       (bool up, unsigned long long start, unsigned long long end, unsigned long long incr, long sched,
                        unsigned long long chunk, unsigned long long* istart, unsigned long long* iend,
                        std::uintptr_t* reductions, void** mem),
                       (up, start, end, incr, sched, chunk, istart, iend, reductions, mem))
