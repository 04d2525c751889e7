// The oneTBB adapter, controller side: sample the hooks' counters, throttle with a shim-owned
// tbb::global_control, release at exit. Also the parking rule used by task_hooks.cpp.
#include <dlfcn.h>
#include <pthread.h>

#include <algorithm>
#include <cstdint>

#include "adapters/common/slot_sampler.hpp"
#include "adapters/tbb/tbb_state.hpp"
#include "shim/log.hpp"

namespace apshim::tbb_adapter {
namespace {

// Layout of tbb::detail::d1::global_control in oneTBB 2021 (global_control.h): we cannot use
// the class itself without linking libtbb, and the shim must not (no-op without TBB).
struct GlobalControl {
    std::size_t value;
    std::intptr_t reserved;
    int param;  // 0 = max_allowed_parallelism
};
using ControlFn = void (*)(GlobalControl&);
constexpr const char* kCreate = "_ZN3tbb6detail2r16createERNS0_2d114global_controlE";
constexpr const char* kDestroy = "_ZN3tbb6detail2r17destroyERNS0_2d114global_controlE";

// A parked worker re-checks at least this often: a lost wake-up costs at most this much.
constexpr std::uint64_t kParkRecheckNs = 20000000ull;

class TbbAdapter final : public Adapter {
public:
    const char* name() const override { return "oneTBB"; }

    Sample sample() override { return sampler_.sample(state().slots, state().limit.load()); }

    void set_active(int n) override {
        if (n < 1) n = 1;
        State& s = state();
        if (s.oversubscribing_controls.load(std::memory_order_relaxed) > 0) {
            // The program raised max_allowed_parallelism above the default itself: it needs
            // those threads (spinning or blocking tasks). Capping could deadlock it: step aside.
            if (control_ || s.limit.load() != 0) {
                log(LogLevel::info, "the program raised TBB's max_allowed_parallelism above %d itself; not throttling TBB",
                    tbb_default_concurrency());
                release_control();
                s.limit.store(0);
                s.lot.wake_all();
            }
            return;
        }
        int old = s.limit.exchange(n);
        if (n > old) s.lot.wake_all();
        if (n == control_value_) return;
        if (!resolve()) return;
        // Create the new control before destroying the old one: destroying the last control
        // resets TBB to its default, which would briefly unthrottle (research notes).
        auto* next = new GlobalControl{static_cast<std::size_t>(n), 0, 0};
        create_(*next);
        if (control_) {
            destroy_(*control_);
            delete control_;
        }
        control_ = next;
        control_value_ = n;
    }

    int active() const override { return state().limit.load(); }

    void release() override {
        State& s = state();
        s.released.store(true);
        s.limit.store(0);
        s.lot.wake_all();
        release_control();
    }

    void release_control() {
        if (control_ && resolve()) {
            destroy_(*control_);
            delete control_;
        }
        control_ = nullptr;
        control_value_ = 0;
    }

    void after_fork_child() {
        // The child's TBB is not ours to steer through the parent's control object (TBB itself
        // does not survive fork well); start over, measured afresh.
        control_ = nullptr;
        control_value_ = 0;
        sampler_.reset();
    }

private:
    bool resolve() {
        if (create_ && destroy_) return true;
        // RTLD_NEXT: libtbb's own functions, not the shim's interposers of them.
        create_ = reinterpret_cast<ControlFn>(dlsym(RTLD_NEXT, kCreate));
        destroy_ = reinterpret_cast<ControlFn>(dlsym(RTLD_NEXT, kDestroy));
        return create_ && destroy_;
    }

    ControlFn create_ = nullptr, destroy_ = nullptr;
    GlobalControl* control_ = nullptr;
    int control_value_ = 0;
    SlotSampler sampler_;
};

TbbAdapter g_adapter;
State g_state;

void fork_child() {
    State& s = g_state;
    s.slots.reset_after_fork();
    s.fork_generation.fetch_add(1);
    s.executing_workers.store(0);
    s.external_waiters.store(0);
    s.parked.store(0);
    s.seen.store(false);
    s.limit.store(0);
    g_adapter.after_fork_child();
}

__attribute__((constructor(111))) void register_fork_handler() {
    if (shim_enabled()) pthread_atfork(nullptr, nullptr, &fork_child);
}

}  // namespace

State& state() noexcept { return g_state; }
Adapter& adapter() noexcept { return g_adapter; }

void maybe_park() noexcept {
    State& s = g_state;
    for (;;) {
        int limit = s.limit.load(std::memory_order_relaxed);
        if (limit <= 0 || s.released.load(std::memory_order_relaxed)) return;
        int allowed_workers = limit - 1;  // the main thread counts as one of the allotment
        int running = s.executing_workers.load(std::memory_order_relaxed);
        if (running < allowed_workers) return;
        // Escape rule: never park when nobody else is running work (a main thread outside TBB
        // may be waiting for tasks queued behind this worker).
        if (running == 0 && s.external_waiters.load(std::memory_order_relaxed) == 0) return;
        std::uint32_t gen = s.lot.generation();
        s.parked.fetch_add(1, std::memory_order_relaxed);
        s.lot.wait(gen, kParkRecheckNs);
        s.parked.fetch_sub(1, std::memory_order_relaxed);
    }
}

}  // namespace apshim::tbb_adapter
