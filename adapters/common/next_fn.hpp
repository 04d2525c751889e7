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
#include <cstdint>

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

// Whether the loaded object holding the code at `site` defines `name` itself (not one of its
// dependencies): which library a call comes from, whatever its file is named. Allocates
// (dladdr, dlopen): once per call site, through SiteCache.
bool object_defines(const void* site, const char* name) noexcept;

// A runtime's entry point is missing although the program called it (cannot happen while the
// runtime is loaded: next_symbol searches every loaded object): one line on stderr naming it,
// then abort, rather than a call to address 0.
[[noreturn]] void missing_entry_point(const char* name) noexcept;
template <typename F>
F must_exist(F f, const char* name) noexcept {
    if (!f) missing_entry_point(name);
    return f;
}

// Several copies of one runtime in a process. pip wheels vendor their own libgomp, renamed by
// auditwheel (scikit-learn's scikit_learn.libs/libgomp-<hash>.so.1.0.0, PyTorch's
// torch/lib/libgomp-<hash>.so.1) beside Debian's /lib/x86_64-linux-gnu/libgomp.so.1 (NumPy's
// OpenBLAS). Each extension module is loaded RTLD_LOCAL and binds to its own copy; the shim's
// global GOMP_parallel is found first by all of them. Forwarding every call to one copy gave
// module A a team of copy B while A's omp_get_thread_num() (not interposed) asked copy A, which
// knows no such team: every thread was thread 0 of 1, static loops ran whole on each thread
// (sum twice over), `single` ran twice (tests/omp/test_copies.py). So the definition is chosen
// per call site: the one the calling object would bind to without the shim (symbol_for_caller).
//
// The objects that answered such lookups for one runtime: two distinct ones mean two copies.
class RuntimeCopies {
public:
    // Base addresses of the first two distinct objects seen (null until then).
    void note(const void* base) noexcept;
    bool several() const noexcept { return second_.load(std::memory_order_relaxed) != nullptr; }
    const void* first() const noexcept { return first_.load(std::memory_order_acquire); }
    const void* second() const noexcept { return second_.load(std::memory_order_acquire); }

private:
    std::atomic<const void*> first_{nullptr}, second_{nullptr};
};

// `name` as the object holding `caller` (a return address) would bind it without the shim: the
// global scope's definition after the shim when there is one (every object looks there first;
// `global` is then set), else the one in that object's own dependencies (an RTLD_LOCAL module and
// the runtime it links), else next_symbol()'s answer. Allocates (dladdr, dlopen): once per call
// site, through SiteCache.
void* symbol_for_caller(const void* caller, const char* name, bool& global) noexcept;

// Call site -> definition, for the entry points no global definition answers (runtimes reached
// only through dlopen(RTLD_LOCAL): every OpenMP runtime under Python). Lock-free, insert-only,
// fixed size: a site that finds no room is looked up again at every call (slow, still right).
// A site calls one entry point, except through a function pointer: keyed by (site, NextFn).
class SiteCache {
public:
    void* find(const void* site, const void* owner) const noexcept {
        std::uintptr_t s = reinterpret_cast<std::uintptr_t>(site);
        for (unsigned i = 0, h = hash(s); i < kProbes; ++i, ++h) {
            const Slot& slot = slots_[h % kSlots];
            // fn last written, first read: a non-null fn means site and owner are final.
            void* fn = slot.fn.load(std::memory_order_acquire);
            std::uintptr_t at = slot.site.load(std::memory_order_relaxed);
            if (at == 0) return nullptr;
            if (at == s && fn && slot.owner.load(std::memory_order_relaxed) == owner) return fn;
        }
        return nullptr;
    }
    void insert(const void* site, const void* owner, void* fn) noexcept;

private:
    static constexpr unsigned kSlots = 4096, kProbes = 16;
    static unsigned hash(std::uintptr_t s) noexcept { return static_cast<unsigned>((s * 0x9E3779B97F4A7C15ull) >> 40); }
    struct Slot {
        std::atomic<std::uintptr_t> site{0};
        std::atomic<const void*> owner{nullptr};
        std::atomic<void*> fn{nullptr};
    };
    Slot slots_[kSlots];
};
extern SiteCache g_site_cache;

// A small answer about the code at `site` (which library it lies in, say), for `owner` (the address
// of an object of the caller's, as key): worked out by `decide(site)` once per site, then read
// from g_site_cache, which holds it as answer + 1 (null there is "not cached").
template <typename Decide>
unsigned cached_site_answer(const void* site, const void* owner, Decide decide) noexcept {
    if (void* known = g_site_cache.find(site, owner))
        return static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(known) - 1);
    unsigned answer = decide(site);
    g_site_cache.insert(site, owner, reinterpret_cast<void*>(std::uintptr_t{answer} + 1));
    return answer;
}

// Looks `name` up for a call from `site` on a cache miss: symbol_for_caller, then the cache (or,
// for a global answer, `global`), noting the defining object in `copies`. Null when none.
void* resolve_for_caller(const void* site, const char* name, const void* owner, std::atomic<void*>& global,
                         RuntimeCopies* copies) noexcept;

template <typename F>
class NextFn {
public:
    constexpr explicit NextFn(const char* name, RuntimeCopies* copies = nullptr) noexcept
        : name_(name), copies_(copies) {}
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
        if (!fn_.load(std::memory_order_acquire)) {
            void* p = next_symbol(name_, /*global_only=*/true);
            fn_.store(reinterpret_cast<F>(p), std::memory_order_release);
            if (p) global_.store(p, std::memory_order_release);
        }
    }
    // The definition for a call from `site` (__builtin_return_address(0) of the hook): where
    // the runtime is in the global scope (a program linked with -fopenmp), the one global answer
    // and one load; else the calling object's own runtime (RuntimeCopies says why).
    F for_caller(const void* site) noexcept {
        if (F f = known_for(site)) [[likely]] return f;
        F f = reinterpret_cast<F>(resolve_for_caller(site, name_, this, global_, copies_));
        // get(), and the BesideFn anchored here (omp_get_level ...), answer from the first copy
        // called, not the first loaded (next_symbol's), which may never run a region.
        F none = nullptr;
        if (f) fn_.compare_exchange_strong(none, f, std::memory_order_acq_rel);
        return f;
    }
    // for_caller() without a lookup: null on a miss.
    F known_for(const void* site) const noexcept {
        if (void* g = global_.load(std::memory_order_acquire)) [[likely]] return reinterpret_cast<F>(g);
        return reinterpret_cast<F>(g_site_cache.find(site, this));
    }

private:
    const char* name_;
    RuntimeCopies* copies_;
    std::atomic<F> fn_{nullptr};
    std::atomic<void*> global_{nullptr};  // the global scope's definition after the shim, once found
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
