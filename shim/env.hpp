// The environment variables the shim adds for the runtimes it steers (shorter spin-waits,
// the shim as oneTBB's ITT collector), and their removal from child programs that do not load
// the shim. The names added are listed in APSHIM_ADDED (comma-separated), so that a child that
// does load the shim knows them for the shim's, not the user's, and a child that does not gets
// none of them.
#pragma once

namespace apshim::env {

// True when `name` is set and the shim did not set it (the user chose a value).
bool set_by_user(const char* name) noexcept;

// Sets `name` to `value` unless the user set it, and lists it in APSHIM_ADDED. Before main only
// (setenv is not thread-safe).
void add_default(const char* name, const char* value) noexcept;

// The environment for a new program: `envp` itself when it still preloads the shim or holds
// nothing the shim added; else a copy without the added variables and APSHIM_ADDED, written into
// `room` (at least as many pointers as envp has entries, plus one). Allocation-free: safe in a
// vfork() child.
char* const* for_child(char* const* envp, char** room) noexcept;

}  // namespace apshim::env
