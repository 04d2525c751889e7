// The value of `name` in an environment block (`environ`, or one about to be handed to a child),
// read directly: no libc getenv, whose caller may be the shim's own interposed getenv
// (adapters/omp/omp_env.cpp) or a host program's replacement (bash defines one that, before
// bash's main, neither sees nor keeps the process environment). Allocation-free and lock-free:
// safe before any constructor ran and in a vfork() child.
#pragma once

#include <cstring>

namespace apshim {

inline const char* env_value(char* const* envp, const char* name) noexcept {
    std::size_t n = std::strlen(name);
    for (char* const* e = envp; e && *e; ++e)
        if (std::strncmp(*e, name, n) == 0 && (*e)[n] == '=') return *e + n + 1;
    return nullptr;
}

}  // namespace apshim
