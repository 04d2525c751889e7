#include "shim/env.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "adapters/common/env_value.hpp"

extern char** environ;

namespace apshim::env {
namespace {

// The process environment itself and libc's setenv, not the host's: bash defines its own
// getenv/setenv, which before bash's main neither see nor keep the process environment (a user's
// KMP_BLOCKTIME=7 came out as the shim's 1).
const char* get(const char* name) noexcept { return env_value(environ, name); }

void set(const char* name, const char* value) noexcept {
    using Fn = int (*)(const char*, const char*, int);
    static Fn real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "setenv"));
    if (real) real(name, value, 1);
}

constexpr const char* kAdded = "APSHIM_ADDED";

// Is `name` (length n) an item of the comma-separated `list`?
bool listed(const char* list, const char* name, std::size_t n) noexcept {
    for (const char* p = list; p && *p;) {
        const char* end = std::strchr(p, ',');
        std::size_t len = end ? static_cast<std::size_t>(end - p) : std::strlen(p);
        if (len == n && std::strncmp(p, name, n) == 0) return true;
        p = end ? end + 1 : nullptr;
    }
    return false;
}

}  // namespace

bool set_by_user(const char* name) noexcept {
    return get(name) != nullptr && !listed(get(kAdded), name, std::strlen(name));
}

void add_default(const char* name, const char* value) noexcept {
    if (set_by_user(name)) return;
    set(name, value);
    const char* list = get(kAdded);
    if (listed(list, name, std::strlen(name))) return;
    std::string next = list && *list ? std::string(list) + "," + name : std::string(name);
    set(kAdded, next.c_str());
}

char* const* for_child(char* const* envp, char** room) noexcept {
    const char* list = env_value(envp, kAdded);
    if (!list) return envp;
    const char* preload = env_value(envp, "LD_PRELOAD");
    if (preload && std::strstr(preload, "libapshim")) return envp;
    std::size_t k = 0;
    for (char* const* e = envp; e && *e; ++e) {
        const char* eq = std::strchr(*e, '=');
        std::size_t n = eq ? static_cast<std::size_t>(eq - *e) : std::strlen(*e);
        bool ours = (n == std::strlen(kAdded) && std::strncmp(*e, kAdded, n) == 0) || listed(list, *e, n);
        if (!ours) room[k++] = *e;
    }
    room[k] = nullptr;
    return room;
}

}  // namespace apshim::env
