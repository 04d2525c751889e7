// pthread_create, interposed: the process's one place where it learns of each thread created
// through it, the runtimes' workers and the program's own alike.
//  - Confinement (confine.hpp) lists /proc/self/task again at its next apply only when this count
//    moved (or the mask changed, or at its periodic scan), not every cycle.
//  - A thread libtbb creates gets its slot from its creator at once (adapters/tbb/thread_hooks.cpp).
// Nothing runs in the new thread: its start routine is passed on as it came (a sanitizer's own
// start routine must run before any of the shim's instrumented code does in that thread).
#include <pthread.h>

#include "adapters/common/next_fn.hpp"
#include "adapters/tbb/tbb_state.hpp"
#include "shim/confine.hpp"

namespace {

using Create = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
apshim::NextFn<Create> next_create{"pthread_create"};
APSHIM_RESOLVE_AT_LOAD(next_create)

}  // namespace

extern "C" __attribute__((visibility("default"))) int pthread_create(pthread_t* thread, const pthread_attr_t* attr,
                                                                    void* (*routine)(void*), void* arg) {
    Create create = apshim::must_exist(next_create.get(), "pthread_create");
    int rc = create(thread, attr, routine, arg);
    if (rc == 0) {
        apshim::confine::thread_created();
        apshim::tbb_adapter::thread_created(*thread);  // reads its caller's frames: never a tail call (rc is returned)
    }
    return rc;
}
