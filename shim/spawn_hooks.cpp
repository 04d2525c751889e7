// Child processes start as they would without the shim, unless they load the shim themselves:
//  - CPU mask: a thread confined by the shim (confine.hpp) goes back to the process's original
//    mask around exec*, posix_spawn*, system and popen, and a fork() child's thread is reset too
//    (preload.cpp), since a new process inherits the mask of the thread that made it;
//  - environment: the variables the shim added for the runtimes (env.hpp: INTEL_LIBITTNOTIFY64,
//    KMP_BLOCKTIME, ...) leave the environment of an exec or posix_spawn whose new environment no
//    longer preloads the shim (`env -u LD_PRELOAD prog` ran prog with the shim as its TBB ITT
//    collector, a table row and a trace). system() and popen() pass the environment unchanged.
// exec* may run in a vfork() child, which shares the parent's memory: nothing here allocates or
// writes shared state on those paths (the filtered environment lives on the stack).
#include <dlfcn.h>
#include <errno.h>
#include <spawn.h>
#include <unistd.h>

#include <alloca.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "shim/confine.hpp"
#include "shim/env.hpp"

extern char** environ;

namespace {

template <typename Fn>
Fn next(Fn& cache, const char* name) {
    Fn real = __atomic_load_n(&cache, __ATOMIC_ACQUIRE);
    if (!real) __atomic_store_n(&cache, real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name)), __ATOMIC_RELEASE);
    return real;
}

std::size_t env_slots(char* const* envp) {
    std::size_t n = 1;
    for (char* const* e = envp; e && *e; ++e) ++n;
    return n * sizeof(char*);
}

// envp for the new program: `envp` itself, or a copy in `room` without the shim's additions.
#define APSHIM_CHILD_ENV(envp) apshim::env::for_child((envp), static_cast<char**>(alloca(env_slots(envp))))

// An exec: the thread to the original mask first; if it fails, back to the confinement.
struct ExecScope {
    int saved = 0;
    ExecScope() { apshim::confine::thread_to_original(); }
    int failed() {
        saved = errno;
        apshim::confine::thread_to_confined();
        errno = saved;
        return -1;
    }
};

using Execve = int (*)(const char*, char* const*, char* const*);
using Execvpe = int (*)(const char*, char* const*, char* const*);
Execve g_execve = nullptr;
Execvpe g_execvpe = nullptr;

int do_execve(const char* path, char* const* argv, char* const* envp) {
    Execve real = next(g_execve, "execve");
    ExecScope scope;
    real(path, argv, APSHIM_CHILD_ENV(envp));
    return scope.failed();
}

int do_execvpe(const char* file, char* const* argv, char* const* envp) {
    Execvpe real = next(g_execvpe, "execvpe");
    ExecScope scope;
    real(file, argv, APSHIM_CHILD_ENV(envp));
    return scope.failed();
}

// The variadic exec*l arguments as an argv on the stack (up to the terminating null).
#define APSHIM_COLLECT_ARGS(arg0, argv)                                          \
    std::size_t apshim_n = 1;                                                    \
    {                                                                            \
        va_list ap;                                                              \
        va_start(ap, arg0);                                                      \
        while (va_arg(ap, char*)) ++apshim_n;                                    \
        va_end(ap);                                                              \
    }                                                                            \
    char** argv = static_cast<char**>(alloca((apshim_n + 1) * sizeof(char*)));  \
    {                                                                            \
        va_list ap;                                                              \
        va_start(ap, arg0);                                                      \
        argv[0] = const_cast<char*>(arg0);                                       \
        for (std::size_t i = 1; i <= apshim_n; ++i) argv[i] = va_arg(ap, char*); \
        va_end(ap);                                                              \
    }

}  // namespace

#define APSHIM_EXPORT extern "C" __attribute__((visibility("default")))

APSHIM_EXPORT int execve(const char* path, char* const argv[], char* const envp[]) { return do_execve(path, argv, envp); }
APSHIM_EXPORT int execv(const char* path, char* const argv[]) { return do_execve(path, argv, environ); }
APSHIM_EXPORT int execvpe(const char* file, char* const argv[], char* const envp[]) {
    return do_execvpe(file, argv, envp);
}
APSHIM_EXPORT int execvp(const char* file, char* const argv[]) { return do_execvpe(file, argv, environ); }

APSHIM_EXPORT int execl(const char* path, const char* arg0, ...) {
    APSHIM_COLLECT_ARGS(arg0, argv);
    return do_execve(path, argv, environ);
}
APSHIM_EXPORT int execlp(const char* file, const char* arg0, ...) {
    APSHIM_COLLECT_ARGS(arg0, argv);
    return do_execvpe(file, argv, environ);
}
APSHIM_EXPORT int execle(const char* path, const char* arg0, ...) {
    APSHIM_COLLECT_ARGS(arg0, argv);
    va_list ap;
    va_start(ap, arg0);
    for (std::size_t i = 1; i <= apshim_n; ++i) (void)va_arg(ap, char*);  // the arguments and their null
    char* const* envp = va_arg(ap, char* const*);
    va_end(ap);
    return do_execve(path, argv, envp);
}

APSHIM_EXPORT int fexecve(int fd, char* const argv[], char* const envp[]) {
    using Fn = int (*)(int, char* const*, char* const*);
    static Fn cache = nullptr;
    Fn real = next(cache, "fexecve");
    ExecScope scope;
    real(fd, argv, APSHIM_CHILD_ENV(envp));
    return scope.failed();
}

namespace {
struct SpawnScope {
    SpawnScope() { apshim::confine::spawn_begin(); }
    ~SpawnScope() {
        int saved = errno;
        apshim::confine::spawn_end();
        errno = saved;
    }
};
}  // namespace

#define APSHIM_POSIX_SPAWN(name)                                                                                    \
    APSHIM_EXPORT int name(pid_t* pid, const char* path, const posix_spawn_file_actions_t* actions,                 \
                           const posix_spawnattr_t* attr, char* const argv[], char* const envp[]) {                 \
        using Fn = int (*)(pid_t*, const char*, const posix_spawn_file_actions_t*, const posix_spawnattr_t*,        \
                           char* const*, char* const*);                                                             \
        static Fn cache = nullptr;                                                                                  \
        Fn real = next(cache, #name);                                                                               \
        SpawnScope scope;                                                                                           \
        return real(pid, path, actions, attr, argv, APSHIM_CHILD_ENV(envp));                                        \
    }
APSHIM_POSIX_SPAWN(posix_spawn)
APSHIM_POSIX_SPAWN(posix_spawnp)

APSHIM_EXPORT int system(const char* command) {
    using Fn = int (*)(const char*);
    static Fn cache = nullptr;
    Fn real = next(cache, "system");
    SpawnScope scope;
    return real(command);
}

APSHIM_EXPORT FILE* popen(const char* command, const char* mode) {
    using Fn = FILE* (*)(const char*, const char*);
    static Fn cache = nullptr;
    Fn real = next(cache, "popen");
    SpawnScope scope;
    return real(command, mode);
}
