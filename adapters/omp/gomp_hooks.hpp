// What the libgomp hook files share: gomp_hooks.cpp (regions, tasks, loops, barriers) and
// gomp_constructs.cpp (taskloops, waits inside other constructs, turns and locks). Two files so
// that the per-task path keeps gcc's inlining: one file of both hit gcc's unit growth limit, and
// GOMP_task's untimed path went from 54 to 65 added instructions a task (tests/cost).
#pragma once

#include "adapters/adapter.hpp"
#include "adapters/common/next_fn.hpp"
#include "adapters/omp/omp_state.hpp"
#include "adapters/omp/thread_state.hpp"

namespace apshim::omp_adapter {

// The hooks adapt and time libgomp. Not with two copies of libgomp in the process (next_fn.hpp:
// RuntimeCopies): the queries gomp_hooks.cpp makes (omp_get_level, ...) answer from one copy only,
// so a team of the other would be sized, timed and parked on wrong answers. Then every call only
// goes on to the caller's own copy, and the controller says so once (omp_adapter.cpp: sample).
inline bool gomp_hooks_on() noexcept { return apshim::host().enabled() && !g_gomp_state.copies.several(); }

// The calling thread's state in libgomp (gomp_hooks.cpp owns it).
ThreadState& gomp_thread_state() noexcept;

}  // namespace apshim::omp_adapter

#define APSHIM_EXPORT extern "C" __attribute__((visibility("default")))
// next_<name>: the real entry point behind our definition of `name` (looked up at load), taken
// for the calling object (APSHIM_CALLER: next_fn.hpp, RuntimeCopies).
#define APSHIM_CALLER __builtin_return_address(0)
#define APSHIM_GOMP_NEXT_FN(type, name)                                     \
    namespace {                                                             \
    apshim::NextFn<type> next_##name{#name, &apshim::omp_adapter::g_gomp_state.copies}; \
    APSHIM_RESOLVE_AT_LOAD(next_##name)                                     \
    }
