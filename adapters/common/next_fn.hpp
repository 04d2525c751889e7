// The real runtime entry point behind one of ours.
//
// Where: the next definition after the shim in the global scope (dlsym(RTLD_NEXT)), or, when
// there is none, the first other loaded object that defines it. A runtime that reached the
// process through dlopen(RTLD_LOCAL) (a Python extension module linking libgomp, a plugin
// linking libomp or libtbb, PyTorch's libgomp-<hash>.so.1) is outside the global scope, so
// RTLD_NEXT answers null there, and calling that crashed NumPy with OpenMP OpenBLAS at its first
// parallel BLAS call.
//
// When: NextFn is constant-initialized (its name is there before any constructor runs, so a
// call from another library's constructor finds it), looked up eagerly by the constructor that
// APSHIM_RESOLVE_AT_LOAD emits, and again lazily on a call that finds it null (a runtime
// dlopen()ed later). Eager at load, not first in a worker thread: a lookup there runs dlsym() (the
// loader's lock, malloc) and, inside a function-local static's guard, a fork() at that moment
// left the guard taken in the child for ever. NextFn uses no such guard.
#pragma once

#include <atomic>

namespace apshim {

// dlsym(RTLD_NEXT, name), else (unless `global_only`) the definition in another loaded object
// than libapshim.so; null when no loaded object defines it. Allocates (dlopen/dlsym): not on a
// per-task path. The search of every object costs about a millisecond per name: at load, where it
// would run in every preloaded process (shells, compilers), only the global scope is asked.
void* next_symbol(const char* name, bool global_only = false) noexcept;

// `name` from the same library that defines `defined` (a real entry point). With libomp and
// libgomp both loaded, RTLD_NEXT alone could answer omp_* from the wrong runtime
// (research/libomp-hooks.md). Null when not found.
void* symbol_beside(void* defined, const char* name) noexcept;

// A runtime's entry point is missing although the program called it (cannot happen while the
// runtime is loaded: next_symbol searches every loaded object): one line on stderr naming it,
// then abort, rather than a call to address 0.
[[noreturn]] void missing_entry_point(const char* name) noexcept;
template <typename F>
F must_exist(F f, const char* name) noexcept {
    if (!f) missing_entry_point(name);
    return f;
}

template <typename F>
class NextFn {
public:
    constexpr explicit NextFn(const char* name) noexcept : name_(name) {}
    F get() noexcept {
        F f = fn_.load(std::memory_order_acquire);
        if (!f) {
            f = reinterpret_cast<F>(next_symbol(name_));
            if (f) fn_.store(f, std::memory_order_release);
        }
        return f;
    }
    F get_if_known() const noexcept { return fn_.load(std::memory_order_acquire); }
    // At load: the global scope only (see next_symbol).
    void resolve_at_load() noexcept {
        if (!fn_.load(std::memory_order_acquire))
            fn_.store(reinterpret_cast<F>(next_symbol(name_, /*global_only=*/true)), std::memory_order_release);
    }

private:
    const char* name_;
    std::atomic<F> fn_{nullptr};
};

// A function of the same runtime as `anchor` (omp_get_level beside GOMP_parallel), cached.
template <typename F, typename Anchor>
class BesideFn {
public:
    constexpr BesideFn(NextFn<Anchor>& anchor, const char* name) noexcept : anchor_(anchor), name_(name) {}
    F get() noexcept {
        F f = fn_.load(std::memory_order_acquire);
        if (!f) {
            void* a = reinterpret_cast<void*>(anchor_.get());
            void* s = a ? symbol_beside(a, name_) : nullptr;
            f = reinterpret_cast<F>(s ? s : next_symbol(name_));
            if (f) fn_.store(f, std::memory_order_release);
        }
        return f;
    }
    // At load: only when the anchor is in the global scope (the runtime is linked by the program).
    void resolve_at_load() noexcept {
        anchor_.resolve_at_load();
        if (anchor_.get_if_known()) (void)get();
    }

private:
    NextFn<Anchor>& anchor_;
    const char* name_;
    std::atomic<F> fn_{nullptr};
};

}  // namespace apshim

// Looks `fn` (a NextFn or BesideFn) up while the library loads (see the top of this file).
#define APSHIM_RESOLVE_AT_LOAD(fn)                                                   \
    __attribute__((constructor(102))) static void apshim_resolve_##fn() { fn.resolve_at_load(); }
