// LLVM libomp, inside its threads: apshim is libomp's OMPT tool (libomp calls the
// ompt_start_tool this library exports; research/libomp-hooks.md). Three callbacks keep each
// thread's work/wait stack (thread_state.hpp), and task_create tells barrier parking about tasks:
//   implicit_task     a thread's share of a region: work
//   sync_region_wait  barrier, taskwait, taskgroup, reduction waits: wait; at a barrier, a thread
//                     beyond what the allotment admits waits first (parking.hpp: at_barrier),
//                     and the thread's blocktime follows confinement (kmp_hooks.cpp)
//   task_create       an explicit task is made: the thread's region has tasks (barrier parking)
//   task_schedule     an explicit task starts (work, pushed over whatever it runs inside) or
//                     ends (popped). No parking here: the thread has dequeued the task, and a
//                     teammate may wait for it in a taskwait (parking here turned BOTS fib from
//                     0.4 s into 26 s and health into a run unfinished after 300 s at allotment
//                     1); confinement (shim/confine.hpp) enforces the allotment on task code,
//                     and where it cannot, a thread waits between two tasks in its barrier, at
//                     libomp's sched_yield (kmp_yield.cpp; parking.hpp: wait_in_barrier). Each
//                     event is counted on the thread (ThreadState::task_events) for that yield.
// The per-task ones look at the thread once and move the frame stack alone (thread_state.hpp:
// bare_hook, bare_frames). No locks, no allocation, no logging here: the controller reports what
// went wrong.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <utility>

#include "adapters/omp/omp_state.hpp"
#include "adapters/omp/ompt_abi.hpp"
#include "adapters/omp/parking.hpp"
#include "adapters/omp/thread_state.hpp"
#include "adapters/omp/whole_team.hpp"

namespace apshim::omp_adapter {
namespace {

__attribute__((tls_model("initial-exec"))) thread_local ThreadState t_state;

// Threads this thread reserved for the outermost region it forks (kmp_hooks.cpp), handed back
// when that region ends: parallel_begin/end nest on the encountering thread.
struct RegionReservation {
    int pending = 0;  // reserved at the fork, region not begun yet
    int owned = 0;    // reserved for the region now open
    int depth = 0;    // regions this thread encountered that are still open
    // whole_team_asked() of the region forked (pending) and of the one open (asked), and the
    // latter's team (its primary's implicit task): note_missing_arrivals at its end.
    int asked_pending = 0, asked = 0, actual = 0;
    // Counted open by begin_spinning_team() (whole_team.hpp): the region forked (pending), the one open.
    bool spinning_pending = false, spinning = false;
    bool sections = false;  // the one open: counted by begin_sections_team() (kmp_sections_begin)
    const void* codeptr = nullptr;  // the outermost of them: its code address (ends_region)
    // libomp's omp_set_dynamic where the fork turned this thread's dyn-var off for a library that
    // needs its whole team (kmp_hooks.cpp, whole_team.hpp): called with 1 when the region ends.
    void (*dynamic_back)(int) = nullptr;
};
__attribute__((tls_model("initial-exec"))) thread_local RegionReservation t_reservation;

void on_parallel_begin(ompt::Data*, const void*, ompt::Data*, unsigned, int, const void* codeptr) {
    RegionReservation& r = t_reservation;
    if (r.depth++ == 0) {
        r.owned = r.pending;
        r.pending = 0;
        r.asked = std::exchange(r.asked_pending, 0);
        r.spinning = std::exchange(r.spinning_pending, false);
        r.actual = 0;
        r.codeptr = codeptr;
    }
}

void on_parallel_end(ompt::Data*, ompt::Data*, int, const void*) {
    RegionReservation& r = t_reservation;
    if (r.depth > 0 && --r.depth == 0) {
        release_team(g_kmp_state, r.owned);
        r.owned = 0;
        if (std::exchange(r.spinning, false)) end_spinning_team(g_kmp_state);
        if (std::exchange(r.sections, false)) end_sections_team(g_kmp_state);
        r.codeptr = nullptr;
        if (auto back = std::exchange(r.dynamic_back, nullptr)) back(1);
    }
}

void on_implicit_task(int endpoint, ompt::Data* region, ompt::Data* task, unsigned team, unsigned index, int flags) {
    if (flags & ompt::task_initial) return;  // the program's serial code is not OpenMP work
    State& s = g_kmp_state;
    ThreadState& t = t_state;
    if (endpoint == ompt::scope_begin) {
        if (t.level++ == 0) {  // a new outermost region: nothing of the last one is still open
            pop_frames_above(s, t, 0);
            t.at_outer_barrier = false;
            t.team_index = static_cast<int>(index);
            if (index == 0) {  // the forking thread (busy.hpp)
                mark_external(s, t);
                t_reservation.actual = static_cast<int>(team);
            }
            region_started(s, t, region);
        }
        push_frame(s, t, /*wait=*/false, task);
    } else if (endpoint == ompt::scope_end) {
        drop_parts_not_of(s, t, task);
        pop_frame(s, t);
        if (t.level > 0 && --t.level == 0) {
            RegionReservation& r = t_reservation;
            // libomp runs a team of one serialized, without the end barrier its arrival counts at.
            if (t.team_index == 0 && r.asked > 0) note_missing_arrivals(t, r.asked, r.actual > 1 ? r.actual : 0);
            r.asked = 0;
            pop_frames_above(s, t, 0);
            set_engaged(s, t, false);
        }
    }
}

// Whether a barrier beginning on this thread is its region's end (the team disbands) rather than
// a worksharing construct's: a region end is progress for the idle check only (note_region_end),
// as in libgomp, so that a burst of tiny regions does not read as a job handing work over
// (GraphicsMagick's shape: tests/omp/omp_phases.c). libomp 14 gives both the same kind; it reports
// its end-of-region (join) barrier with no code address on the team's workers and, on the thread
// that forked, with the region's own (the one parallel_begin reported), and a loop's barrier with
// the address of the loop's code. OpenMP 5.1's runtimes name the region's end outright.
bool ends_region(int kind, const void* codeptr) noexcept {
    if (kind == ompt::barrier_implicit_parallel) return true;
    return kind == ompt::barrier_implicit && (codeptr == nullptr || codeptr == t_reservation.codeptr);
}

__attribute__((noinline)) void sync_region_wait(State& s, ThreadState& t, int kind, int endpoint, ompt::Data* task,
                                                const void* codeptr) noexcept {
    drop_parts_not_of(s, t, task);  // `task` is the one waiting
    // A barrier of an outermost region is met in the thread's implicit task (never inside an
    // explicit one), whose frame is the first: anything above it is a leftover.
    // At its end, the barrier's wait frame is the second.
    bool outermost_barrier = ompt::is_barrier(kind) && t.level == 1;
    if (endpoint == ompt::scope_begin) {
        if (outermost_barrier) pop_frames_above(s, t, 1);
        push_frame(s, t, /*wait=*/true);
        if (ends_region(kind, codeptr)) {
            note_region_end(s, t);
        } else {
            note_progress(s, t);
            if (outermost_barrier) follow_blocktime_at_barrier();
        }
        if (outermost_barrier) {
            at_barrier(s, t);
            t.at_outer_barrier = true;
            note_in_task(t, false);
        }
    } else if (endpoint == ompt::scope_end) {
        if (outermost_barrier) pop_frames_above(s, t, 2);
        pop_frame(s, t);
        if (outermost_barrier) {
            t.at_outer_barrier = false;
            note_in_task(t, false);
            tell_barrier_waiters(s);
            set_engaged(s, t, true);
        }
    }
}

void on_sync_region_wait(int kind, int endpoint, ompt::Data*, ompt::Data* task, const void* codeptr) {
    State& s = g_kmp_state;
    ThreadState& t = t_state;
    // A taskwait, taskgroup or reduction wait (fib: one per task): its frame, and its progress mark
    // at its begin.
    if (!ompt::is_barrier(kind) && (endpoint == ompt::scope_begin || endpoint == ompt::scope_end)) {
        BareHook h = bare_hook(s, t);
        bool begin = endpoint == ompt::scope_begin;
        if (h.may && bare_frames(t, task, begin ? FrameChange::push_wait : FrameChange::pop)) [[likely]] {
            bare_hook_done(t, h, /*mark=*/begin);
            return;
        }
    }
    sync_region_wait(s, t, kind, endpoint, task, codeptr);
}

// The frame change a task_schedule event makes: a body ends (`prior`'s) or begins (`next`'s,
// pushed over whatever it runs inside); an early/late fulfill of a detached task changes none.
FrameChange change_at(int prior_status, const ompt::Data* next) noexcept {
    switch (prior_status) {
    case ompt::task_complete:
    case ompt::task_cancel:
    case ompt::task_detach:
    case ompt::taskwait_complete:
        return FrameChange::pop;
    case ompt::task_switch:
        return next ? FrameChange::switch_task : FrameChange::none;
    case ompt::task_yield:
        return next ? FrameChange::push_task : FrameChange::none;
    default:
        return FrameChange::none;
    }
}

__attribute__((noinline)) void task_schedule(State& s, ThreadState& t, ompt::Data* prior, int prior_status,
                                             ompt::Data* next) noexcept {
    // Made and done: each thread's progress is marked. `prior` is the task this thread was in.
    if (prior_status == ompt::task_complete) note_progress(s, t);
    change_frames(s, t, prior, change_at(prior_status, next), next);
}


void on_task_schedule(ompt::Data* prior, int prior_status, ompt::Data* next) {
    State& s = g_kmp_state;
    ThreadState& t = t_state;
    ++t.task_events;
    BareHook h = bare_hook(s, t);
    if (h.may && bare_frames(t, prior, change_at(prior_status, next), next)) [[likely]] {
        bare_hook_done(t, h, /*mark=*/prior_status == ompt::task_complete);
    } else {
        task_schedule(s, t, prior, prior_status, next);
    }
    if (t.at_outer_barrier) note_in_task(t, t.depth > 2);
}

void on_task_create(ompt::Data*, const void*, ompt::Data*, int flags, int, const void*) {
    if (!(flags & ompt::task_explicit)) return;
    made_task(g_kmp_state, t_state);
    note_progress(g_kmp_state, t_state);
}

std::atomic<ompt::GetTaskInfo> g_get_task_info{nullptr};

int initialize(ompt::Lookup lookup, int, ompt::Data*) {
    auto set = reinterpret_cast<ompt::SetCallback>(lookup("ompt_set_callback"));
    if (!set) return 0;
    g_get_task_info.store(reinterpret_cast<ompt::GetTaskInfo>(lookup("ompt_get_task_info")));
    bool ok = set(ompt::implicit_task, reinterpret_cast<ompt::Callback>(&on_implicit_task)) == ompt::set_always;
    ok = set(ompt::sync_region_wait, reinterpret_cast<ompt::Callback>(&on_sync_region_wait)) == ompt::set_always && ok;
    ok = set(ompt::task_schedule, reinterpret_cast<ompt::Callback>(&on_task_schedule)) == ompt::set_always && ok;
    g_kmp_state.measuring.store(ok ? 1 : 0);
    set(ompt::task_create, reinterpret_cast<ompt::Callback>(&on_task_create));  // without it, no barrier parking
    bool ends = set(ompt::parallel_begin, reinterpret_cast<ompt::Callback>(&on_parallel_begin)) == ompt::set_always;
    ends = set(ompt::parallel_end, reinterpret_cast<ompt::Callback>(&on_parallel_end)) == ompt::set_always && ends;
    g_kmp_state.sees_region_ends.store(ends ? 1 : 0);
    return 1;  // keep the tool active either way: an unmeasured libomp is still throttled
}

// At exit libomp finalises its tool after the controller stopped (atexit before library
// destructors): nothing to undo.
void finalize(ompt::Data*) {}

}  // namespace

ThreadState& kmp_thread_state() noexcept { return t_state; }

// libomp's own word, not the frames: before the frames followed an untied part's return
// (FrameChange::switch_task), they lost count, and read a thread inside a nested taskwait as
// between two tasks in its barrier (BOTS uts parked its whole team), or a thread waiting in its
// barrier as busy in a task (its teammate, parked on seeing it at work, waited for the bound of a
// second, 4 times in a 0.8 s run). Parking must not rest on a measure: a stack that still loses
// count somewhere (an event a runtime does not report) is set right here.
bool kmp_no_task_in_barrier(State& s, ThreadState& t) noexcept {
    ompt::GetTaskInfo info = g_get_task_info.load(std::memory_order_relaxed);
    int flags = 0;
    ompt::Data* task = nullptr;
    if (!info || info(0, &flags, &task, nullptr, nullptr, nullptr) != 2 || !(flags & ompt::task_implicit)) return false;
    if (t.depth != 2 || !frame_is_wait(t, 1) || t.tags[0] != task) {
        pop_frames_above(s, t, 0);
        push_frame(s, t, /*wait=*/false, task);
        push_frame(s, t, /*wait=*/true);
    }
    note_in_task(t, false);
    return true;
}

void kmp_sections_begin(long sections) noexcept {
    RegionReservation& r = t_reservation;
    const ThreadState& t = t_state;
    // The forking thread of an outermost region whose end OMPT reports (r.depth: 0 without it).
    if (r.depth != 1 || t.level != 1 || t.team_index != 0 || r.sections || !sections_may_meet(sections)) return;
    r.sections = begin_sections_team(g_kmp_state, static_cast<int>(std::min<long>(r.actual, sections)));
}

void kmp_outermost_fork(int reserved, void (*dynamic_back)(int), int asked, bool spinning) noexcept {
    RegionReservation& r = t_reservation;
    // At an outermost fork this thread has no region open: whatever it still holds is from a
    // region whose end was not reported; give it back rather than starve concurrent roots.
    release_team(g_kmp_state, r.pending + r.owned);
    for (bool open : {std::exchange(r.spinning_pending, false), std::exchange(r.spinning, false)})
        if (open) end_spinning_team(g_kmp_state);
    if (std::exchange(r.sections, false)) end_sections_team(g_kmp_state);
    r.spinning_pending = spinning;
    if (r.dynamic_back && r.dynamic_back != dynamic_back) r.dynamic_back(1);
    r.pending = reserved;
    r.owned = 0;
    r.depth = 0;
    r.dynamic_back = dynamic_back;
    r.asked_pending = asked;
}

}  // namespace apshim::omp_adapter

// libomp calls this (its own definition is weak, reached through the PLT) when it initialises.
// A tool the user names in OMP_TOOL_LIBRARIES wins: libomp runs one tool only, and apshim does
// not multiplex; the controller then says once that libomp is not measured.
extern "C" __attribute__((visibility("default"))) apshim::ompt::StartToolResult* ompt_start_tool(unsigned, const char*) {
    using namespace apshim::omp_adapter;
    if (!apshim::host().enabled()) return nullptr;
    const char* other = std::getenv("OMP_TOOL_LIBRARIES");
    if (other && *other) {
        g_kmp_state.other_tool.store(true);
        return nullptr;
    }
    static apshim::ompt::StartToolResult result{&initialize, &finalize, {0}};
    return &result;
}
