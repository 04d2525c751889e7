// The oneTBB adapter, controller side: sample the hooks' counters, throttle with a shim-owned
// tbb::global_control, release at exit, forget everything in a forked child (shim/fork.cpp). The parking rule
// itself runs in TBB's workers and lives in task_hooks.cpp.
#include <dlfcn.h>

#include <algorithm>
#include <cstdint>

#include "adapters/common/clock.hpp"
#include "adapters/common/next_fn.hpp"
#include "adapters/common/slot_sampler.hpp"
#include "adapters/tbb/tbb_abi.hpp"
#include "adapters/tbb/tbb_state.hpp"
#include "adapters/tbb/tcm_server.hpp"

namespace apshim::tbb_adapter {
namespace {

// tbb::detail::d1::global_control (tbb_abi.hpp): the class itself needs libtbb, which the shim
// must not link (no-op without TBB).
using tbb_abi::GlobalControl;
using ControlFn = void (*)(GlobalControl&);

class TbbAdapter final : public Adapter {
public:
    const char* name() const override { return "oneTBB"; }

    Sample sample() override {
        State& s = state();
        bool stamping = s.stamping.load();
        Sample out = sampler_.sample(s.slots, s.limit.load(), timed_throughout_ && stamping);
        timed_throughout_ = stamping;
        // For the stall valve (stalled()), run after it in every cycle: the hooks count every
        // task begun, timed or not (a CPU clock would read a thread spinning in a task as work),
        // and every wait while the valve may act. A cycle whose nested waits went uncounted
        // (nested_waits_plain) counts as progress: it could not tell.
        std::uint64_t events = s.slots.total_events();
        tasks_began_ = events != last_events_ || s.nested_waits_plain.load();
        last_events_ = events;
        return out;
    }

    Activity activity() override { return activity_now(state().slots); }

    void set_active(int n) override {
        if (n < 1) n = 1;
        State& s = state();
        // The program set max_allowed_parallelism itself: it may need those threads (spinning or
        // blocking tasks meeting each other). Capping could deadlock it: the shim's control and
        // TCM's worker counts step aside. Confinement (where active) still keeps the job on its
        // allotment's CPUs; where it can never be, parking does (below): like confinement it
        // keeps the program's thread count and holds its threads to the allotment, only at task
        // boundaries and nested waits, and its escape rules let tasks that meet each other go on
        // (a worker the CPU escape let go keeps going while the job is within its allotment:
        // task_hooks.cpp, keep_going; without that, oneTBB's test_task_group crawled to its
        // time-out). flexbar -n 2 with parking only: 1.94 CPUs at allotment 1 before, 1.55 now.
        const bool own_count = s.program_sets_parallelism.load(std::memory_order_relaxed);
        if (own_count) {
            if (s.control.load() || (s.limit.load() != 0 && host().confinement_possible())) {
                host().log(Host::Severity::info, "the program set TBB's max_allowed_parallelism itself; TBB's worker count is left to it");
                release_control();
                s.limit.store(0);
                s.lot.wake_all();
                wake_nested(s);
            }
            tcm::set_workers(-1);
            // Without the task hooks (oneTBB took no ITT collector) nothing can park: say so once.
            if (!host().confinement_possible() && !s.hooks.load() && n < tbb_default_concurrency() && !told_unheld_) {
                told_unheld_ = true;
                host().log(Host::Severity::warn,
                           "the program set TBB's max_allowed_parallelism itself and its threads cannot be confined to "
                           "CPUs: its oneTBB threads are not throttled");
            }
            if (host().confinement_possible() || !s.hooks.load()) {
                stop_timing(s);
                s.nested_waits_plain.store(true);  // no cap, no stall valve
                return;
            }
        }
        bool stuck = stalled(s);
        if (stuck) n = tbb_default_concurrency();  // no cap while it looks stuck behind it
        // Timed hooks while fewer threads than TBB's own may work and parking may need their
        // busy flags (busy.hpp); on before the cap comes down, off after it went up, so parking
        // never reads stale flags. Confined, nobody parks (Host::parking_wanted), and the CPU
        // clocks measure the job on its allotment's CPUs: a thread switched out mid-task reads
        // idle rather than busy, and p is the allotment, so a job with work for all of them
        // still reads inefficiency near 0 and a serial one near 1, without a timestamp per task.
        // Parked, they measure it the same way (a parked thread uses no CPU), so the flags carry
        // a time only where the clocks fall short (tbb_state.hpp, stamping).
        bool timed = s.hooks.load() && ((n < tbb_default_concurrency() && host().parking_wanted()) || cpu_clocks_fall_short());
        s.stamping.store(timed && cpu_clocks_fall_short());
        // Nested waits count as progress while the valve may act: under a cap, and while it is
        // lifted (it comes down once tasks begin again); and they keep WaitScope's timing rules
        // from before the hooks time anything.
        s.nested_waits_plain.store(!timed && !stuck && !holds_tbb_back(n));
        if (timed) s.timing.store(true);
        // oneTBB 2021.11+ asks the shim for its arenas' workers (tcm_server.hpp): the main thread
        // is one of the allotment's threads, workers the rest.
        if (tcm::clients() > 0)
            APSHIM_HOST_LOG_ONCE(Host::Severity::info, "oneTBB uses the shim as its thread composability manager (TCM): its arenas' workers follow the allotment");
        if (!own_count) tcm::set_workers(stuck || s.finalizing.load() > 0 ? -1 : n - 1);
        int old = s.limit.exchange(n);
        // Any worker is as good as another here: wake as many as the rise admits (the others
        // stay parked; they would only find no room and park again).
        if (n > old) {
            s.lot.wake(n - std::max(old, 0));
            wake_nested(s);  // each parked in a wait of its own: all of them look again
        }
        if (s.nested_layout_unknown.load() && !told_layout_) {
            told_layout_ = true;
            host().log(Host::Severity::warn, "this oneTBB's wait_context is not the layout the shim knows (oneTBB 2021's): its "
                                             "workers are not parked inside nested waits, and a recursive program is held less");
        }
        if (!timed) {
            stop_timing(s);
            timed_throughout_ = false;
        }
        free_retired();
        // No control of the shim's beside the program's own; and a finalize in progress dropped the
        // control and must not see a new one (task_hooks.cpp).
        if (own_count || s.finalizing.load() > 0) return;
        if (s.control.load() == nullptr) control_value_ = 0;  // dropped by a finished finalize
        n = control_for(n);
        if (n == control_value_) return;
        if (!resolve()) return;
        // Create the new control before destroying the old one: destroying the last control
        // resets TBB to its default, which would briefly unthrottle (research notes).
        auto* next = new GlobalControl{static_cast<std::size_t>(n), 0, tbb_abi::kMaxAllowedParallelism};
        create_(*next);
        destroy(s.control.exchange(next));
        control_value_ = n;
        // A finalize that began meanwhile may have missed `next`: drop it ourselves.
        if (s.finalizing.load() > 0) {
            destroy(s.control.exchange(nullptr));
            control_value_ = 0;
        }
    }

    int active() const override { return state().limit.load(); }

    bool said_unheld() const override { return told_unheld_; }

    void release() override {
        State& s = state();
        s.released.store(true);
        s.limit.store(0);
        s.lot.wake_all();
        wake_nested(s);
        stop_timing(s);
        s.nested_waits_plain.store(true);
        timed_throughout_ = false;
        release_control();
        tcm::set_workers(-1);
    }

    static void stop_timing(State& s) noexcept {
        s.timing.store(false);
        s.stamping.store(false);
    }

    void release_control() {
        destroy(state().control.exchange(nullptr));
        free_retired();
        control_value_ = 0;
    }

    void after_fork_child() override {
        State& s = state();
        s.slots.reset_after_fork();
        s.claim_lock.clear();  // a thread that held it is gone
        s.fork_generation.fetch_add(1);
        s.executing_workers.store(0);
        s.parked.store(0);
        for (auto& e : s.nested) {  // only the forking thread survives, and it parks nowhere
            e.wait_ctx.store(0);
            e.lot.reset();
        }
        s.nested_used.store(0);
        s.nested_parked.store(0);
        s.cpu_total.reset();
        s.seen.store(false);
        s.limit.store(0);
        stop_timing(s);
        s.nested_waits_plain.store(true);
        s.finalizing.store(0);  // only the forking thread survives, and it is not inside finalize
        // The child's TBB is not ours to steer through the parent's control object (TBB itself
        // does not survive fork well); start over, measured afresh. The parent's control is
        // neither destroyed nor freed (the child's copy of TBB's control list still points at
        // it) but kept reachable, so LeakSanitizer does not call it a leak in every forked child.
        if (void* c = state().control.exchange(nullptr)) forked_controls_[forks_++ % kForkedControls] = c;
        if (void* c = state().retired.exchange(nullptr)) forked_controls_[forks_++ % kForkedControls] = c;
        control_value_ = 0;
        sampler_.reset();
        last_events_ = 0;
        last_progress_ns_ = 0;
        tasks_began_ = stall_lifted_ = timed_throughout_ = told_unheld_ = told_layout_ = false;
        tcm::after_fork_child();
    }

private:
    // Stall valve. TBB promises no concurrency, yet programs make tasks wait for each other in
    // numbers sized by max_concurrency() (a barrier inside tasks: oneTBB's test_task_arena,
    // std::barrier inside a parallel_for); under the cap the threads they wait for never come,
    // and the waiting threads look idle, so the desire never rises to admit them. When no task
    // began for kStallNs while a thread sits inside one, the cap is lifted until tasks begin
    // again. A long task that is merely slow lifts it too: that costs only oversubscription
    // inside the job, which confinement keeps on the job's CPUs.
    static constexpr std::uint64_t kStallNs = 100000000ull;
    // The max_allowed_parallelism control for allotment `n`: never below 2 (one TBB worker) where
    // TBB has workers at all. At 1, TBB's soft limit is 0 workers, and work only a worker can take
    // (an arena without slots for application threads, tasks left in an arena by a thread that
    // stopped looking) waits for ever: oneTBB's test_task_arena, test_task_group and
    // test_resumable_tasks hung (tests/peer/RESULTS.md). Allotment 1 is enforced by confinement,
    // or by parking that worker (task_hooks.cpp), whose escape rules and progress valve cannot
    // hang the program.
    static int control_for(int n) noexcept { return std::max(n, std::min(2, tbb_default_concurrency())); }

    // Does allotment `n` hold TBB below its own concurrency (what the stall valve is there to
    // lift)? Through the control (control_for), through TCM's worker count (2021.11+), or through
    // parking where it is wanted. On 2 CPUs, confined at allotment 1 and without TCM, nothing
    // does: the job's two threads share its one CPU, and its nested waits stay a tail call (11
    // instead of 67 instructions a task: fib at allotment 1 ran 3% slower than one thread natively).
    static bool holds_tbb_back(int n) noexcept {
        int own = tbb_default_concurrency();
        return n < own && (control_for(n) < own || tcm::clients() > 0 || host().parking_wanted());
    }

    bool stalled(State& s) noexcept {
        std::uint64_t now = now_ns();
        if (tasks_began_ || last_progress_ns_ == 0 || !anyone_in_task(s.slots)) {
            last_progress_ns_ = now;
            stall_lifted_ = false;
            return false;
        }
        if (now - last_progress_ns_ < kStallNs) return stall_lifted_;
        if (!stall_lifted_)
            APSHIM_HOST_LOG_ONCE(Host::Severity::info,
                "oneTBB tasks wait for threads the allotment holds back (no task began for %d ms): the worker cap is lifted until they go on",
                static_cast<int>(kStallNs / 1000000));
        stall_lifted_ = true;
        return true;
    }

    bool resolve() {
        if (create_ && destroy_) return true;
        // libtbb's own functions, not the shim's interposers of them (tbb_symbol: RTLD_NEXT first).
        create_ = reinterpret_cast<ControlFn>(tbb_symbol(APSHIM_TBB_GC_CREATE));
        destroy_ = reinterpret_cast<ControlFn>(tbb_symbol(APSHIM_TBB_GC_DESTROY));
        return create_ && destroy_;
    }

    void destroy(void* control) {
        if (!control || !resolve()) return;
        auto* c = static_cast<GlobalControl*>(control);
        destroy_(*c);
        delete c;
    }

    static void free_retired() { delete static_cast<GlobalControl*>(state().retired.exchange(nullptr)); }

    ControlFn create_ = nullptr, destroy_ = nullptr;
    int control_value_ = 0;  // value of the live control in state().control, 0 when none
    // Controls (live or retired) inherited through fork: the last few; older ones are dropped.
    static constexpr unsigned kForkedControls = 8;
    void* forked_controls_[kForkedControls] = {};
    unsigned forks_ = 0;
    SlotSampler sampler_;
    // Stall valve (stalled()): did a task begin since the previous sample, since when has none.
    bool tasks_began_ = false, stall_lifted_ = false;
    // The hooks timed every task since the previous sample, so their intervals measure the cycle;
    // otherwise the CPU clocks do (SlotSampler), which are read in every cycle.
    bool timed_throughout_ = false;
    std::uint64_t last_progress_ns_ = 0, last_events_ = 0;
    bool told_unheld_ = false;  // said once that neither a cap nor confinement holds the job's TBB
    bool told_layout_ = false;  // said once that nested waits cannot be parked in (State::nested_layout_unknown)
};

TbbAdapter g_adapter;

}  // namespace

State g_state;
Adapter& adapter() noexcept { return g_adapter; }
std::span<Adapter* const> adapters() noexcept {
    static Adapter* const all[] = {&g_adapter};
    return all;
}

void* tbb_symbol(const char* mangled) noexcept { return next_symbol(mangled); }

}  // namespace apshim::tbb_adapter
