// A thread was created (the pthread_create interposer, shim/thread_hooks.cpp): the threads libtbb
// creates are its workers, and their slots are claimed as they are created (worker_created,
// task_hooks.cpp), by the creating thread. Without the ITT task hooks (task_hooks.cpp: the
// default) a worker running loop bodies calls nothing the shim interposes, yet the controller must
// read its CPU clock every cycle, and a worker's waits must never be taken for an external
// thread's outermost entry.
//
// Who creates the thread: the first few frames of the creating thread's stack (libunwind, local
// only), not just the caller's address, because a sanitizer's pthread_create interceptor (ASan,
// TSan, preloaded before the shim) sits between libtbb and the interposer.
#include <dlfcn.h>
#include <pthread.h>
#include <time.h>

#include <cstdint>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "adapters/tbb/tbb_state.hpp"

namespace {

// Frames looked at above pthread_create: up to two interceptors, and their caller.
constexpr int kCreatorFrames = 6;

// No function-local static: its guard, taken by a thread that a fork() left behind, would hang
// the child's first thread creation. Two dladdr calls per frame, at thread creation only.
bool in_shim(unw_word_t ip) noexcept {
    Dl_info self, info;
    return dladdr(reinterpret_cast<void*>(&in_shim), &self) != 0 && dladdr(reinterpret_cast<void*>(ip), &info) != 0 &&
           info.dli_fbase == self.dli_fbase;
}

// A cursor stepped frame by frame, not unw_backtrace: that one keeps a per-thread cache whose
// thread-exit destructor takes a lock after a sanitizer has torn the thread down (TSan: SEGV in
// every thread that created a worker). The two frames above this one are thread_created below
// and the interposer (shim/thread_hooks.cpp), both noinline and neither a tail call; above them,
// the shim's own code (its controller thread, started from a hook that libtbb called) is not
// TBB's, however close libtbb is on the stack.
__attribute__((noinline)) bool created_by_tbb() noexcept {
    unw_context_t context;
    unw_cursor_t cursor;
    if (unw_getcontext(&context) != 0 || unw_init_local(&cursor, &context) != 0) return false;
    if (unw_step(&cursor) <= 0 || unw_step(&cursor) <= 0) return false;  // to thread_created, then the interposer
    for (int i = 0; i < kCreatorFrames && unw_step(&cursor) > 0; ++i) {
        unw_word_t ip = 0;
        if (unw_get_reg(&cursor, UNW_REG_IP, &ip) != 0 || in_shim(ip)) return false;
        if (apshim::tbb_adapter::in_tbb(static_cast<std::uintptr_t>(ip))) return true;
    }
    return false;
}

}  // namespace

namespace apshim::tbb_adapter {

__attribute__((noinline)) void thread_created(pthread_t thread) noexcept {
    clockid_t clock;
    if (host().enabled() && created_by_tbb() && pthread_getcpuclockid(thread, &clock) == 0) worker_created(clock);
}

}  // namespace apshim::tbb_adapter
