// The real runtime entry point behind one of ours, looked up when libapshim.so loads (in the
// loading thread, before main), not at its first call. A first call comes from a runtime's
// worker thread in the middle of a region, and a lookup there runs dlsym() (the loader's lock,
// malloc) inside a function-local static's initialization guard while another thread may
// fork(): a child forked then would find the guard taken for ever and hang at its first call of
// that entry point. A runtime dlopen()ed after load is looked up at its first call.
#pragma once

#include <dlfcn.h>

#include <atomic>

namespace apshim::omp_adapter {

template <typename F>
class NextFn {
public:
    explicit NextFn(const char* name) noexcept : name_(name), fn_(lookup(name)) {}
    F get() noexcept {
        F f = fn_.load(std::memory_order_acquire);
        if (!f) {
            f = lookup(name_);
            fn_.store(f, std::memory_order_release);
        }
        return f;
    }

private:
    static F lookup(const char* name) noexcept { return reinterpret_cast<F>(dlsym(RTLD_NEXT, name)); }
    const char* name_;
    std::atomic<F> fn_;
};

}  // namespace apshim::omp_adapter
