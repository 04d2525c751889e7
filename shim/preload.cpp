// What runs when libapshim.so is loaded: options, fork/exit safety, and the Host through which
// the adapters reach the shim (adapters/adapter.hpp). Nothing here touches a runtime; in a program that uses neither oneTBB nor
// OpenMP no adapter ever calls runtime_started(), so no thread starts and no table is opened.
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "adapters/adapter.hpp"
#include "shim/confine.hpp"
#include "shim/controller.hpp"
#include "shim/env.hpp"
#include "shim/fork.hpp"
#include "shim/log.hpp"
#include "shim/options.hpp"

extern char** environ;

namespace apshim {
namespace {

Options* g_options = nullptr;
Controller* g_controller = nullptr;  // never destroyed: hooks may still run during exit
std::atomic<bool> g_exit_hook{false};

// Complaints about bad options wait until a runtime is used: in the shells, compilers and
// tools that LD_PRELOAD also reaches, the shim says nothing at all.
constexpr int kMaxComplaints = 8;
char g_complaints[kMaxComplaints][512];
int g_complaint_count = 0;
std::atomic<bool> g_complaints_said{false};

void complain(const char* line) {
    if (g_complaint_count < kMaxComplaints) {
        std::snprintf(g_complaints[g_complaint_count], sizeof g_complaints[0], "%s", line);
        ++g_complaint_count;
    }
}

void say_complaints() {
    if (g_complaints_said.exchange(true)) return;
    for (int i = 0; i < g_complaint_count; ++i) log(LogLevel::warn, "%s", g_complaints[i]);
}

void at_exit() { g_controller->shutdown(); }

// At APSHIM_LOG=info a process that never used a runtime the shim knows says so as it exits, so
// a user can tell "nothing to throttle" (a pthreads-only program) from "not loaded" (no line at
// all). Registered in the constructor only at that level; silent otherwise.
void say_if_unused() {
    if (!g_exit_hook.load()) log(LogLevel::info, "no oneTBB, libomp or libgomp work in this process: nothing to throttle");
}

// What the adapters may ask of the shim (adapters/adapter.hpp). Installed at the end of
// shim_init, once options, controller and fork handlers are in place, and only when the shim is
// enabled: before that, and in a disabled shim, adapters see the disabled Host.
int g_cpus = 0;  // default_processors() at start, before confinement narrows the mask

class ShimHost final : public Host {
public:
    constexpr ShimHost() noexcept : Host(/*enabled=*/true) {}

    void runtime_started(Adapter& adapter) const noexcept override {
        say_complaints();
        // Registered at each runtime's first start, so the controller is stopped (and leaves the
        // table, and destroys what it made in the runtimes) before any runtime's own static
        // destructors run: atexit handlers run in reverse order, and a runtime's are registered
        // as it is loaded, before it starts. Once at the first start was not enough: R starts
        // libgomp, then loads libtbb (RcppParallel, for dada2); at exit libtbb's statics were
        // gone when the shim destroyed its global_control, and the program aborted ("pure
        // virtual method called", rc 134: docs/enforcement.md, eighty-eighth session). Once per
        // adapter (runtime_started is called once each); shutdown does its work once.
        g_exit_hook.store(true);
        std::atexit(&at_exit);
        g_controller->adapter_started(adapter);
    }
    int processors() const noexcept override {
        int P = g_controller->table_processors();
        return P > 0 ? P : g_options->P;
    }
    int cpus() const noexcept override { return g_cpus; }
    std::uint64_t est_cycle_ns() const noexcept override {
        std::uint64_t ns = g_controller->table_cycle_ns();
        return ns > 0 ? ns : static_cast<std::uint64_t>(g_options->est_cycle_ms * 1e6);
    }
    bool shrink_teams_opted_in() const noexcept override { return g_options->shrink_teams; }
    bool parking_wanted() const noexcept override { return !confine::active() && !confine::suspended(); }
    bool confined() const noexcept override { return confine::active(); }
    int confined_cpus() const noexcept override { return confine::confined_cpus(); }
    bool others_want_more() const noexcept override { return g_controller->others_want_more(); }
    bool confinement_possible() const noexcept override { return confine::why_off() == nullptr; }
    bool libomp_binding_asked() const noexcept override { return confine::libomp_binding_asked() != nullptr; }
    int cpu_rank(int cpu) const noexcept override { return confine::rank(cpu); }
    bool inline_tasks() const noexcept override { return g_options->inline_tasks; }
    void reclaim() const noexcept override { g_controller->wake_to_reclaim(); }
    void env_default(const char* name, const char* value) const noexcept override { env::add_default(name, value); }
    bool env_chosen_by_user(const char* name) const noexcept override { return env::set_by_user(name); }

protected:
    void vlog(Severity level, const char* fmt, va_list ap) const noexcept override {
        apshim::vlog(static_cast<LogLevel>(level), fmt, ap);
    }
};
static_assert(Host::kCpuUnplaced == confine::kUnplaced);
static_assert(static_cast<int>(Host::Severity::error) == static_cast<int>(LogLevel::error) &&
              static_cast<int>(Host::Severity::warn) == static_cast<int>(LogLevel::warn) &&
              static_cast<int>(Host::Severity::info) == static_cast<int>(LogLevel::info) &&
              static_cast<int>(Host::Severity::debug) == static_cast<int>(LogLevel::debug));
constinit ShimHost g_host;

__attribute__((constructor(101))) void shim_init() {
    confine::capture_at_load();  // the CPU mask the user started us with, before anything changes it
    // The mask the process started with, for P's default and g_cpus: libgomp may have bound this
    // thread already (confine.hpp: capture_before_binding).
    // Never destroyed, as the controller: the runtimes' threads may still call the Host (which
    // reads the options) while static destructors run at exit, and this object's would run last.
    alignas(Options) static unsigned char options_storage[sizeof(Options)];
    g_options = new (options_storage) Options(parse_options(environ, &complain, confine::original_cpus()));
    Options& options = *g_options;
    set_log_level(options.log);
    if (options.disable) return;  // silent: a disabled shim is exactly no shim
    if (!options.confine) confine::disable("APSHIM_CONFINE=0");
    else confine::check_system();
    g_cpus = default_processors(confine::original_cpus());
    alignas(Controller) static unsigned char storage[sizeof(Controller)];
    g_controller = new (storage) Controller(options);
    fork_handlers::install(*g_controller);
    install_host(g_host);
    if (options.log >= LogLevel::info) std::atexit(&say_if_unused);
}

// Code before main runs on the stack main's locals will use. Preloading the shim changes what it
// leaves there (the loader maps and relocates libstdc++, our constructors run), so a program that
// reads an uninitialised local of main sees other garbage than without the shim: two of LLVM's
// OpenMP tests pass natively only because a byte there happens to be 0 (tests/peer/RESULTS.md).
// After the shim's constructors (101, 110, 111) have run, zero the stack below this one, as a
// fresh stack holds, within a quarter of the stack limit. Main thread only: a constructor of a
// library dlopen()ed from another thread must not assume its stack size.
__attribute__((noinline)) void zero_stack_below(std::size_t bytes) {
    char* buf = static_cast<char*>(__builtin_alloca(bytes));
    std::memset(buf, 0, bytes);
    __asm__ volatile("" : : "r"(buf) : "memory");  // the stores are the point: keep them
}

__attribute__((constructor(200))) void leave_the_stack_clean() {
    if (syscall(SYS_gettid) != getpid()) return;
    constexpr std::size_t kBytes = 32 * 1024;
    rlimit lim{};
    if (getrlimit(RLIMIT_STACK, &lim) != 0) return;
    if (lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur / 4 < kBytes) return;
    zero_stack_below(kBytes);
}

}  // namespace

}  // namespace apshim
