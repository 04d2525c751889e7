// GCC libgomp, inside the program's threads: constructs whose work or waits gomp_hooks.cpp's
// entry points do not see (gomp_hooks.hpp says why they live apart). While the hooks time
// (throttled; busy.hpp), each of them measures what it is:
//  - GOMP_taskloop(_ull): each task's body runs through a trampoline of its construct's that
//    pushes a work frame and marks its run; the call is a wait (its implicit taskgroup's end),
//    unless nogroup;
//  - the barriers inside other constructs (GOMP_single_copy_start and _end: `single copyprivate`;
//    GOMP_workshare_task_reduction_unregister: the end of a loop with a task reduction): waits;
//  - waiting for an ordered turn (GOMP_ordered_start, also a progress mark), a critical section
//    (GOMP_critical_start, GOMP_critical_name_start) or an atomic's lock (GOMP_atomic_start):
//    waits, inside a region's or a task's frame.
// Untimed, each goes to libgomp as the program made it. Nothing here parks: a thread in a taskloop
// task has dequeued it, and one in a construct's barrier or at a turn may be the one its
// teammates wait for. Not covered: the program's own locks (omp_set_lock: counted as work).
#include <array>
#include <atomic>
#include <cstddef>
#include <utility>

#include "adapters/omp/gomp_hooks.hpp"

namespace apshim::omp_adapter {
namespace {

using Fn = void (*)(void*);

inline bool timed() noexcept { return g_gomp_state.timing.load(std::memory_order_relaxed); }

// Taskloops. libgomp gives each task of a taskloop its own copy of the data block and writes the
// task's iterations into the copy's first two words (and reads a reduction's pointer after them),
// so the block cannot carry a header as GOMP_task's does (gomp_hooks.cpp). The body function is
// what changes: a taskloop's body is one outlined function per construct, and each gets a
// trampoline of its own. Before, a teammate that ran taskloop tasks at the region's end barrier
// (where a `single` ends, with nothing after it) read idle while throttled: a taskloop job's busy
// time read as one thread's, whatever its team (tests/omp/omp_taskloop.c; forty-ninth session).
constexpr int kTaskloopBodies = 64;  // distinct taskloop constructs wrapped; those after run as made
std::atomic<Fn> g_taskloop_bodies[kTaskloopBodies];

__attribute__((noinline)) void run_taskloop_body(Fn fn, void* data) {
    ThreadState& t = gomp_thread_state();
    Frame work(g_gomp_state, t, /*wait=*/false, /*task=*/true);
    note_progress(g_gomp_state, t);
    fn(data);
}

template <int K>
void run_taskloop_task(void* data) {
    run_taskloop_body(g_taskloop_bodies[K].load(std::memory_order_acquire), data);
}

template <std::size_t... K>
constexpr std::array<Fn, sizeof...(K)> taskloop_trampolines(std::index_sequence<K...>) {
    return {&run_taskloop_task<static_cast<int>(K)>...};
}
constexpr auto kTaskloopTrampolines = taskloop_trampolines(std::make_index_sequence<kTaskloopBodies>{});

// fn's trampoline, taking the next free one for a body not seen before; null once all are taken.
Fn taskloop_trampoline(Fn fn) noexcept {
    for (int k = 0; k < kTaskloopBodies; ++k) {
        Fn seen = g_taskloop_bodies[k].load(std::memory_order_acquire);
        if (seen == nullptr && g_taskloop_bodies[k].compare_exchange_strong(seen, fn, std::memory_order_acq_rel))
            return kTaskloopTrampolines[k];
        if (seen == fn) return kTaskloopTrampolines[k];
    }
    return nullptr;
}

constexpr unsigned kTaskFlagNogroup = 1u << 11;  // GOMP_TASK_FLAG_NOGROUP: no taskgroup, no wait

template <typename T, typename R>
void taskloop(R real_fn, Fn fn, void* data, void (*cpyfn)(void*, void*), long arg_size, long arg_align,
              unsigned flags, unsigned long num_tasks, int priority, T start, T end, T step) {
    if (!gomp_hooks_on() || !timed())
        return real_fn(fn, data, cpyfn, arg_size, arg_align, flags, num_tasks, priority, start, end, step);
    Fn body = taskloop_trampoline(fn);
    if (body == nullptr) {
        APSHIM_HOST_LOG_ONCE(apshim::Host::Severity::info,
                             "more than %d taskloop constructs: the tasks of those after are timed as the code around them",
                             kTaskloopBodies);
        body = fn;
    }
    ThreadState& t = gomp_thread_state();
    note_progress(g_gomp_state, t);
    if (flags & kTaskFlagNogroup)
        return real_fn(body, data, cpyfn, arg_size, arg_align, flags, num_tasks, priority, start, end, step);
    Frame wait(g_gomp_state, t, /*wait=*/true);
    real_fn(body, data, cpyfn, arg_size, arg_align, flags, num_tasks, priority, start, end, step);
}

// A barrier inside another construct: a wait and a progress mark, as gomp_hooks.cpp's waits. A
// thread inside such a wait when timing went off keeps its frame until it returns.
template <typename F, typename... A>
auto construct_wait(F real_fn, A... args) {
    if (!gomp_hooks_on()) return real_fn(args...);
    ThreadState& t = gomp_thread_state();
    if (plain_nested_wait(g_gomp_state, t)) return real_fn(args...);
    Frame wait(g_gomp_state, t, /*wait=*/true);
    note_progress(g_gomp_state, t);
    return real_fn(args...);
}

// A turn or a lock: a wait inside a region's or a task's frame; outside any (serial code, a thread
// of the program's own) the call goes on as made and claims no slot. Untimed one load more than
// the call (a critical section about 1 ns alone, forty-ninth session).
template <typename F, typename... A>
void turn_wait(bool marks, F real_fn, A... args) {
    if (!gomp_hooks_on() || !timed()) return real_fn(args...);
    ThreadState& t = gomp_thread_state();
    if (marks) note_progress(g_gomp_state, t);
    if (t.depth == 0) return real_fn(args...);
    Frame wait(g_gomp_state, t, /*wait=*/true);
    real_fn(args...);
}

}  // namespace
}  // namespace apshim::omp_adapter

using namespace apshim::omp_adapter;

#define APSHIM_GOMP_TASKLOOP(name, T)                                                                           \
    APSHIM_GOMP_NEXT_FN(void (*)(Fn, void*, void (*)(void*, void*), long, long, unsigned, unsigned long, int, T, \
                                 T, T),                                                                         \
                        name)                                                                                   \
    APSHIM_EXPORT void name(void (*fn)(void*), void* data, void (*cpyfn)(void*, void*), long arg_size,            \
                            long arg_align, unsigned flags, unsigned long num_tasks, int priority, T start,       \
                            T end, T step) {                                                                    \
        auto real_fn = apshim::must_exist(next_##name.for_caller(APSHIM_CALLER), #name);                        \
        taskloop<T>(real_fn, fn, data, cpyfn, arg_size, arg_align, flags, num_tasks, priority, start, end, step); \
    }
APSHIM_GOMP_TASKLOOP(GOMP_taskloop, long)
APSHIM_GOMP_TASKLOOP(GOMP_taskloop_ull, unsigned long long)

// `single copyprivate`: the teammates wait in GOMP_single_copy_start for the value, everyone in
// GOMP_single_copy_end; a worksharing loop with a task reduction ends in a taskgroup's end and a
// barrier. Before, a teammate waiting there read busy (omp_waits copy at allotment 1: median busy
// 1.90-1.99 with one thread computing, now 1.00).
#define APSHIM_GOMP_CONSTRUCT_WAIT(R, name, params, args)                                  \
    APSHIM_GOMP_NEXT_FN(R(*) params, name)                                                 \
    APSHIM_EXPORT R name params {                                                          \
        auto real_fn = apshim::must_exist(next_##name.for_caller(APSHIM_CALLER), #name);   \
        return construct_wait(real_fn APSHIM_COMMA_ARGS args);                             \
    }
// (a, b) -> , a, b   and   () -> nothing: the arguments after the helper's first.
#define APSHIM_COMMA_ARGS(...) __VA_OPT__(, ) __VA_ARGS__
APSHIM_GOMP_CONSTRUCT_WAIT(void*, GOMP_single_copy_start, (), ())
APSHIM_GOMP_CONSTRUCT_WAIT(void, GOMP_single_copy_end, (void* data), (data))
APSHIM_GOMP_CONSTRUCT_WAIT(void, GOMP_workshare_task_reduction_unregister, (bool cancelled), (cancelled))

// Turns and locks. A teammate blocked on a contended critical section or waiting for its ordered
// turn read busy (omp_waits at allotment 1, one thread computing at a time: critical 1.38-1.46,
// ordered 1.57-1.64; now 1.00). Ordered turns are also a progress mark each: a loop whose threads
// take turns thousands of times a second is what confinement slows most (shim/confine_check.hpp).
#define APSHIM_GOMP_TURN_WAIT(name, marks, params, args)                                   \
    APSHIM_GOMP_NEXT_FN(void(*) params, name)                                              \
    APSHIM_EXPORT void name params {                                                       \
        auto real_fn = apshim::must_exist(next_##name.for_caller(APSHIM_CALLER), #name);   \
        turn_wait(marks, real_fn APSHIM_COMMA_ARGS args);                                  \
    }
APSHIM_GOMP_TURN_WAIT(GOMP_ordered_start, true, (), ())
APSHIM_GOMP_TURN_WAIT(GOMP_critical_start, false, (), ())
APSHIM_GOMP_TURN_WAIT(GOMP_critical_name_start, false, (void** name), (name))
APSHIM_GOMP_TURN_WAIT(GOMP_atomic_start, false, (), ())
