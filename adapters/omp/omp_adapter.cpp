// Controller side of the OpenMP adapters, and the team-size rule the fork hooks apply.
#include "adapters/omp/omp_adapter.hpp"

#include <dlfcn.h>

#include <algorithm>

#include "adapters/common/clock.hpp"
#include "adapters/common/next_fn.hpp"
#include "adapters/omp/gomp_spin.hpp"
#include "adapters/omp/kmp_roots.hpp"
#include "adapters/omp/whole_team.hpp"

namespace apshim::omp_adapter {

State g_kmp_state, g_gomp_state;
OmpAdapter g_kmp("libomp", g_kmp_state, /*needs_ompt=*/true);
OmpAdapter g_gomp("libgomp", g_gomp_state, /*needs_ompt=*/false);

std::span<Adapter* const> adapters() noexcept {
    static Adapter* const all[] = {&g_kmp, &g_gomp};
    return all;
}

namespace {

// libgomp's spin counts (gomp_spin.hpp), in each copy the program's regions went to.
void follow_gomp_spin(Waiting wait) noexcept {
    const void* copies[] = {gomp_first_called(), g_gomp_state.copies.first(), g_gomp_state.copies.second()};
    gomp_spin_follow(wait, copies);
}

// libomp's count of its threads against its CPUs (kmp_roots.hpp): above them while confinement
// has the team share CPUs, as it then is.
void follow_kmp_roots(State& s) noexcept {
    // A default team (0: libomp's own size) as the threads that ever ran libomp's work here.
    int team = s.last_team.load();
    if (team <= 0) team = s.slots.used();
    int cpus = host().confined_cpus();
    bool share = cpus > 0 && cpus < team && s.seen.load() && !kmp_threads_capped_by_user();
    kmp_roots_follow(share, team, kmp_root_entries());
}

}  // namespace

Sample OmpAdapter::sample() {
    // Every copy's spin counts follow the job's situation, however many copies there are.
    if (&state_ == &g_gomp_state) follow_gomp_spin(waiting_now());
    if (&state_ == &g_kmp_state) follow_kmp_roots(state_);
    if (state_.copies.several()) return several_copies_sample();
    Sample out;
    if (needs_ompt_ && state_.measuring.load() == 0) {
        out = unmeasured_sample();
    } else {
        bool timing = state_.timing.load();
        out = sampler_.sample(state_.slots, state_.limit.load(), timed_throughout_ && timing);
        timed_throughout_ = timing;
    }
    out.spinning_team = spinning_team_at_sample(state_, spinning_seen_);
    return out;
}

// Unmeasured libomp (no OMPT): its regions are not seen, so it never reads quiet.
Activity OmpAdapter::activity() {
    if ((needs_ompt_ && state_.measuring.load() == 0) || state_.copies.several()) return {};
    return activity_now(state_.slots);
}

// Two copies of the runtime (next_fn.hpp: RuntimeCopies): the hooks only pass each call on to the
// caller's copy (gomp_hooks.cpp: hooks_on), so nothing adapts its teams or parks its threads any
// more; say so once, wake whatever was parked, and count its regions for a fair share.
Sample OmpAdapter::several_copies_sample() {
    if (state_.limit.load() != kReleased) {
        Dl_info a{}, b{};
        const char* first = dladdr(state_.copies.first(), &a) && a.dli_fname ? a.dli_fname : "?";
        const char* second = dladdr(state_.copies.second(), &b) && b.dli_fname ? b.dli_fname : "?";
        host().log(Host::Severity::warn, "two copies of %s loaded (%s, %s): each module's calls go to its own copy, as "
                   "without apshim, and neither is measured or adapted (no parking, no team sizing); the job asks "
                   "for a fair share and its threads still run on its allotment's CPUs", name(), first, second);
        release();  // libgomp's spin count back as it was, too
    }
    return fair_share_sample();
}

Sample OmpAdapter::unmeasured_sample() {
    if (state_.other_tool.load())
        APSHIM_HOST_LOG_ONCE(Host::Severity::warn, "OMP_TOOL_LIBRARIES names another OMPT tool: libomp is not measured, its teams "
                                        "get a fair share without adaptation");
    else
        APSHIM_HOST_LOG_ONCE(Host::Severity::warn, "libomp did not load apshim as its OMPT tool (OMP_TOOL=disabled, or a tool "
                                        "linked into the program): not measured, teams get a fair share without adaptation");
    return fair_share_sample();
}

// Every allowed thread busy while regions run (no measure).
Sample OmpAdapter::fair_share_sample() {
    Sample out;
    std::uint64_t now = now_ns(), forks = state_.forks.load();
    out.used = forks != last_forks_;
    int limit = state_.limit.load(), team = std::max(1, state_.last_team.load());
    out.usage = limit > 0 ? std::min(team, limit) : team;
    if (out.used && last_ns_) out.busy_ns = static_cast<std::uint64_t>(out.usage) * (now - last_ns_);
    last_ns_ = now;
    last_forks_ = forks;
    return out;
}

void OmpAdapter::set_active(int n) {
    n = std::max(n, 1);
    int old = state_.limit.load();
    if (old == kReleased) return;  // release() is for good
    // Timed hooks while the allotment is below the job's team (busy.hpp): on before the limit
    // comes down, off after it went up, so parking never reads untimed slots.
    int team = state_.last_team.load();
    bool timed = state_.always_timed.load() || n < (team > 0 ? team : host().processors()) ||
                 cpu_clocks_fall_short(state_.slots.used());
    if (timed) state_.timing.store(true);
    state_.team_limit.store(recent_limits_.push(n));
    state_.limit.store(n);
    state_.tasks_at_once.store(n == 1 && host().inline_tasks(), std::memory_order_relaxed);
    // All, not n - old: threads are admitted by team index, not by count (a rise of one admits
    // index n - 1 of every concurrent team), and which of the waiters those are is not known here.
    if (n > old) state_.lot.wake_all();
    if (!timed) {
        state_.timing.store(false);
        timed_throughout_ = false;
    }
}

int OmpAdapter::active() const { return state_.limit.load(); }

void OmpAdapter::set_team_cap(int n) { state_.team_cap.store(std::max(n, 0), std::memory_order_relaxed); }

void OmpAdapter::release() {
    if (&state_ == &g_gomp_state) follow_gomp_spin(Waiting::shim);
    if (&state_ == &g_kmp_state) kmp_roots_release();
    state_.limit.store(kReleased);
    state_.tasks_at_once.store(false);
    state_.timing.store(false);  // nothing parks or reads the intervals any more
    state_.lot.wake_all();
}

void OmpAdapter::after_fork_child() {
    // Only the forking thread survives: no parked threads, no slots; the next fork tells the
    // (restarted) controller again.
    state_.slots.reset_after_fork();
    if (&state_ == &g_kmp_state) kmp_roots_after_fork_child();
    state_.fork_generation.fetch_add(1);
    state_.seen.store(false);
    state_.first_wait_until.store(0);
    state_.limit.store(kNotStarted);
    state_.team_limit.store(kNotStarted);
    state_.team_cap.store(0);
    state_.tasks_at_once.store(false);
    state_.timing.store(state_.always_timed.load());
    timed_throughout_ = false;
    recent_limits_.reset();
    state_.parked.store(0);  // the parent's parked threads are not in the child
    state_.parked_before_chunks.store(0);
    state_.parked_in_barrier.store(0);
    state_.team_extras.store(0);
    state_.spinning_open.store(0);
    state_.spinning_team.store(0);
    spinning_seen_.open_team = 0;
    state_.sections_open.store(0);
    state_.sections_team.store(0);
    spinning_seen_.sections_held = 0;
    state_.lot.reset();
    state_.cpu_total.reset();
    state_.barrier_cpu.reset();
    sampler_.reset();
    last_ns_ = last_forks_ = 0;
}

namespace {
// New teams form at the highest recent allotment (RecentMax), never below the current one, and no
// wider than the team cap while there is one.
int team_width(const State& s) noexcept {
    int width = std::max(s.limit.load(std::memory_order_relaxed), s.team_limit.load(std::memory_order_relaxed));
    int cap = s.team_cap.load(std::memory_order_relaxed);
    return cap > 0 ? std::min(width, cap) : width;
}

bool may_shrink(int requested, const ForkIcvs& icvs, bool opted_in) noexcept {
    return (icvs.dynamic || opted_in) && (requested > 0 || icvs.max_threads > 0);
}
}  // namespace

int whole_team_asked(int requested, const ForkIcvs& icvs, bool opted_in) noexcept {
    if (!may_shrink(requested, icvs, opted_in)) return 0;
    return requested > 0 ? requested : icvs.max_threads;
}

int team_size(const State& s, int requested, const ForkIcvs& icvs, bool opted_in) noexcept {
    int limit = s.limit.load(std::memory_order_relaxed);
    int bound = whole_team_asked(requested, icvs, opted_in);
    if (limit == kReleased || bound == 0) return requested;
    return limit > 0 ? std::min(bound, team_width(s)) : bound;
}

int reserve_team(State& s, int requested, const ForkIcvs& icvs, bool opted_in, int& reserved) noexcept {
    reserved = 0;
    if (!may_shrink(requested, icvs, opted_in)) return requested;
    int n = team_size(s, requested, icvs, opted_in);
    if (n <= 1) return n;
    int limit = s.limit.load(std::memory_order_relaxed);
    if (limit == kReleased) return n;
    int width = limit == kNotStarted ? n : team_width(s);
    int extras = s.team_extras.load(std::memory_order_relaxed);
    int take;
    do {
        take = std::clamp(width - 1 - extras, 0, n - 1);
    } while (!s.team_extras.compare_exchange_weak(extras, extras + take, std::memory_order_relaxed));
    reserved = take;
    return take + 1;
}

void release_team(State& s, int reserved) noexcept {
    if (reserved > 0) s.team_extras.fetch_sub(reserved, std::memory_order_relaxed);
}

namespace {

// The runtime that implements the GOMP_* entry point at `entry` (the program's first region's):
// libomp and Intel's libiomp5 implement libgomp's ABI too, for programs built with gcc, and
// conda-forge's llvm-openmp installs libomp under libgomp.so.1's name, so the file's name cannot
// tell; a libomp defines __kmpc_fork_call itself, which no libgomp does. Unknown: libgomp. The
// program's thread, at its first fork only (object_defines allocates).
const char* gomp_runtime_name(const void* entry) noexcept {
    return entry && object_defines(entry, "__kmpc_fork_call") ? "libomp" : "libgomp";
}

}  // namespace

void note_fork(State& s, int team) noexcept {
    if (!s.seen.load(std::memory_order_relaxed) && !s.seen.exchange(true)) {
        // A team, before the first allotment: timed until it comes (set_active turns it off where
        // the allotment admits the team; the controller calls it every cycle, so a race with the
        // first costs a cycle at most). A task made untimed has no frame, and the tasks it makes
        // never run at once at allotment 1 (gomp_hooks.cpp: run_at_once): BOTS health (gcc) makes
        // its whole program as one task from a single about a millisecond before the first
        // allotment, and in most runs its tasks all went to libgomp's queue, where the teammate in
        // the end barrier ran them beside it (1.74-1.84 CPUs under OMP_PROC_BIND at allotment 1,
        // 1.48 confined; 1.02-1.04 now, with parking.hpp's at_barrier keeping every thread out of
        // the barrier until the allotment). Framing only the root was not enough: fib's root makes
        // both halves of the program within microseconds. A team of one has nothing to hold.
        if (team > 1 && s.limit.load(std::memory_order_relaxed) == kNotStarted) s.timing.store(true);
        if (&s == &g_gomp_state) g_gomp.rename(gomp_runtime_name(gomp_first_called()));
        host().runtime_started(&s == &g_kmp_state ? static_cast<Adapter&>(g_kmp) : static_cast<Adapter&>(g_gomp));
    }
    s.forks.store(s.forks.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    s.last_team.store(team, std::memory_order_relaxed);
}

}  // namespace apshim::omp_adapter
