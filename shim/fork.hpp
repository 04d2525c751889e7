// fork() in the host: the process's one pthread_atfork registration (shim/fork.cpp).
#pragma once

#include "shim/controller.hpp"

namespace apshim::fork_handlers {

// Registers the handlers, once, from the shim's constructor (enabled shims only):
//  prepare  takes the controller's mutex (held by the controller thread during one cycle), so
//           the child never inherits a half-done cycle; parent: releases it;
//  child    (only the forking thread exists) puts the child back on the original CPU mask
//           (confinement), forgets the parent's controller thread and row (controller), then
//           resets every adapter of the process, OpenMP's (libomp, libgomp) then oneTBB's,
//           whether or not the parent's controller had registered them: they are static objects
//           whose hooks may have run.
void install(Controller& controller) noexcept;

}  // namespace apshim::fork_handlers
