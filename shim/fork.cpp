// The one fork module: what a fork() child and its parent need from the shim (see fork.hpp).
// The child's order is that of the three registrations it replaces (constructor priorities 101
// shim, 110 OpenMP, 111 oneTBB; child handlers run in registration order).
#include "shim/fork.hpp"

#include <pthread.h>

#include "adapters/omp/omp_adapter.hpp"
#include "adapters/tbb/tbb_state.hpp"
#include "shim/confine.hpp"

namespace apshim::fork_handlers {
namespace {

Controller* g_controller = nullptr;

void prepare() { g_controller->before_fork(); }
void parent() { g_controller->after_fork_parent(); }
void child() {  // atexit registrations survive fork
    confine::after_fork_child();  // the child process starts on the original CPU mask
    g_controller->after_fork_child();
    for (Adapter* a : omp_adapter::adapters()) a->after_fork_child();
    for (Adapter* a : tbb_adapter::adapters()) a->after_fork_child();
}

}  // namespace

void install(Controller& controller) noexcept {
    if (g_controller) return;
    g_controller = &controller;
    pthread_atfork(&prepare, &parent, &child);
}

}  // namespace apshim::fork_handlers
