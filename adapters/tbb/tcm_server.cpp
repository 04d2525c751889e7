// The shim as oneTBB's thread composability manager (tcm_server.hpp says what and why).
//
// Two sides, as in every adapter: the tcm* entry points run inside TBB's threads (short critical
// sections under a spin lock, no allocation, no logging); set_workers() runs on the controller
// and is the only place that calls TBB back. The API is oneTBB's src/tbb/tcm.h (TCM 1.x), whose
// types are restated here: TBB passes them by value and reads them back.
#include "adapters/tbb/tcm_server.hpp"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "adapters/adapter.hpp"
#include "adapters/common/next_fn.hpp"
#include "adapters/tbb/tbb_state.hpp"

extern "C" {
// ---- oneTBB's tcm.h, restated (the layout TBB compiles against) ----
typedef enum { TCM_RESULT_SUCCESS = 0x0, TCM_RESULT_ERROR_INVALID_ARGUMENT = 0x78000004, TCM_RESULT_ERROR_UNKNOWN = 0x7ffffffe } tcm_result_t;
enum { TCM_PERMIT_STATE_VOID, TCM_PERMIT_STATE_INACTIVE, TCM_PERMIT_STATE_PENDING, TCM_PERMIT_STATE_IDLE, TCM_PERMIT_STATE_ACTIVE };
typedef std::uint8_t tcm_permit_state_t;
typedef struct {
    std::uint32_t stale : 1;
    std::uint32_t rigid_concurrency : 1;
    std::uint32_t exclusive : 1;
    std::uint32_t request_as_inactive : 1;
    std::uint32_t reserved : 28;
} tcm_permit_flags_t;
typedef struct {
    std::uint32_t new_concurrency : 1;
    std::uint32_t new_state : 1;
    std::uint32_t reserved : 30;
} tcm_callback_flags_t;
typedef void* tcm_cpu_mask_t;  // hwloc_bitmap_t: never looked at
typedef std::uint64_t tcm_client_id_t;
typedef struct {
    std::uint32_t* concurrencies;
    tcm_cpu_mask_t* cpu_masks;
    std::uint32_t size;
    tcm_permit_state_t state;
    tcm_permit_flags_t flags;
} tcm_permit_t;
typedef struct tcm_permit_rep_t* tcm_permit_handle_t;
typedef struct {
    std::int32_t min_concurrency, max_concurrency;
    tcm_cpu_mask_t mask;
    std::int32_t numa_id, core_type_id, threads_per_core;
} tcm_cpu_constraints_t;
typedef struct {
    std::int32_t min_sw_threads;
    std::int32_t max_sw_threads;
    tcm_cpu_constraints_t* cpu_constraints;
    std::uint32_t constraints_size;
    std::int32_t priority;
    tcm_permit_flags_t flags;
    char reserved[4];
} tcm_permit_request_t;
typedef tcm_result_t (*tcm_callback_t)(tcm_permit_handle_t, void* callback_arg, tcm_callback_flags_t);
}

namespace apshim::tbb_adapter::tcm {
namespace {

constexpr int kMaxClients = 16;
// One per live arena. Past this many at once a new arena gets no permit (TBB then sees a grant of
// 0 workers for it); 1024 live task_arenas is far beyond what programs create.
constexpr int kMaxPermits = 1024;

struct Permit {
    bool used = false;  // the slot is taken (until release has waited out its callbacks)
    bool live = false;  // granted and called back (cleared first by release)
    tcm_client_id_t client = 0;
    void* arg = nullptr;
    int min = 0, max = 0;
    tcm_permit_state_t state = TCM_PERMIT_STATE_VOID;
    std::uint32_t granted = 0;
    std::atomic<int> calls{0};  // callbacks into TBB in flight for this permit
};

struct Server {
    std::atomic_flag lock = ATOMIC_FLAG_INIT;
    bool connected[kMaxClients] = {};  // client id k+1 at index k
    tcm_callback_t callbacks[kMaxClients] = {};  // null: a client never called back
    Permit permits[kMaxPermits];
    int workers = -1;  // set_workers(): -1 = grant what is asked
};
Server g_server;

struct Guard {
    Guard() noexcept {
        while (g_server.lock.test_and_set(std::memory_order_acquire)) sched_yield();
    }
    ~Guard() { g_server.lock.clear(std::memory_order_release); }
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;
};

bool counts(const Permit& p) { return p.live && p.state != TCM_PERMIT_STATE_INACTIVE && p.state != TCM_PERMIT_STATE_VOID; }

// TBB's own worker limit, max_allowed_parallelism - 1 (the program's global_control, or the
// shim's). oneTBB applies it to its market but, with a TCM, not to the arenas' grants
// (tcm_adaptor::set_active_num_workers does nothing): granting past it put 8 bodies in flight
// under a limit of 7 (oneTBB's conformance_global_control at APSHIM_P=8). Asked outside the
// server's lock: TBB takes its control list's lock.
using ActiveValue = std::size_t (*)(int);
apshim::NextFn<ActiveValue> g_active_value{"_ZN3tbb6detail2r127global_control_active_valueEi"};
APSHIM_RESOLVE_AT_LOAD(g_active_value)
constexpr int kUnlimited = 1 << 20;
int tbb_worker_limit() noexcept {
    ActiveValue fn = g_active_value.get();
    std::size_t v = fn ? fn(0 /* max_allowed_parallelism */) : 0;
    return v >= 1 ? static_cast<int>(std::min<std::size_t>(v - 1, kUnlimited)) : kUnlimited;
}

// What the arenas may have together: the allotment's workers (or unlimited), within TBB's limit.
int pool(int limit) { return g_server.workers < 0 ? limit : std::min(g_server.workers, limit); }
// An arena that asks for workers gets at least one (tcm_server.hpp) and at least its minimum,
// also under TBB's own limit of 0 workers (a program's max_allowed_parallelism of 1): TBB asks
// for one worker with a minimum of 0 for work only a worker can take (an enqueued task, oneTBB's
// test_task "Enqueue with exception"), and its market gives it one; a grant of 0 hung that test.
int floor_of(const Permit& p) { return p.max > 0 ? std::max(p.min, 1) : 0; }

// Under the lock: grants for every permit; marks each changed one as called. Returns how many it
// marked, their indexes in `changed`.
int regrant_all(int* changed, int limit) {
    Server& s = g_server;
    std::uint32_t next[kMaxPermits] = {};
    int left = pool(limit);
    for (int i = 0; i < kMaxPermits; ++i)
        if (counts(s.permits[i])) {
            next[i] = static_cast<std::uint32_t>(floor_of(s.permits[i]));
            left -= static_cast<int>(next[i]);
        }
    for (int i = 0; i < kMaxPermits && left > 0; ++i)
        if (counts(s.permits[i])) {
            int more = std::min(left, s.permits[i].max - static_cast<int>(next[i]));
            next[i] += static_cast<std::uint32_t>(more);
            left -= more;
        }
    int n = 0;
    for (int i = 0; i < kMaxPermits; ++i) {
        Permit& p = s.permits[i];
        if (!p.live || p.granted == next[i]) continue;
        p.granted = next[i];
        p.calls.fetch_add(1);
        changed[n++] = i;
    }
    return n;
}

// Under the lock: this permit's grant from what the others hold now (they are re-balanced on the
// controller's next cycle, not from inside TBB's request).
void grant_one(Permit& p, int limit) {
    Server& s = g_server;
    if (!counts(p)) {
        p.granted = 0;
        return;
    }
    int others = 0;
    for (const Permit& q : s.permits)
        if (&q != &p && counts(q)) others += static_cast<int>(q.granted);
    int lo = floor_of(p);
    p.granted = static_cast<std::uint32_t>(std::clamp(pool(limit) - others, lo, std::max(lo, p.max)));
}

Permit* permit_of(tcm_permit_handle_t h) {
    auto* p = reinterpret_cast<Permit*>(h);
    return p >= g_server.permits && p < g_server.permits + kMaxPermits ? p : nullptr;
}

// 1 = the shim serves, 0 = it refuses, 2 = a real libtcm behind the shim answers. Decided at the
// first tcmConnect: the shim's switch and TCM_ENABLE are read there, once.
std::atomic<int> g_mode{-1};

int mode() noexcept {
    int m = g_mode.load(std::memory_order_acquire);
    if (m >= 0) return m;
    const char* enable = std::getenv("TCM_ENABLE");
    if (next_symbol("tcmConnect")) m = 2;  // Intel's TCM is loaded: the machine's manager, not ours to replace
    else m = host().enabled() && !(enable && std::strcmp(enable, "0") == 0) ? 1 : 0;
    int expected = -1;
    g_mode.compare_exchange_strong(expected, m);
    return g_mode.load();
}

}  // namespace

void set_workers(int workers) noexcept {
    if (g_mode.load(std::memory_order_acquire) != 1) return;
    {
        Guard g;
        g_server.workers = workers;
    }
    regrant();
}

void regrant() noexcept {
    if (g_mode.load(std::memory_order_acquire) != 1) return;
    int changed[kMaxPermits];
    int n = 0;
    int limit = tbb_worker_limit();
    {
        Guard g;
        n = regrant_all(changed, limit);
    }
    for (int k = 0; k < n; ++k) {
        Permit& p = g_server.permits[changed[k]];
        tcm_callback_t cb = nullptr;
        void* arg = nullptr;
        {
            Guard g;
            if (p.live && p.client >= 1 && p.client <= kMaxClients && g_server.connected[p.client - 1])
                cb = g_server.callbacks[p.client - 1], arg = p.arg;
        }
        tcm_callback_flags_t flags{};
        flags.new_concurrency = 1;
        // TBB's callback reads the permit back (tcmGetPermitData) and moves its arena's workers.
        if (cb) cb(reinterpret_cast<tcm_permit_handle_t>(&p), arg, flags);
        p.calls.fetch_sub(1);
    }
}

int clients() noexcept {
    if (g_mode.load(std::memory_order_acquire) != 1) return 0;
    Guard g;
    int n = 0;
    for (bool c : g_server.connected) n += c;
    return n;
}

void after_fork_child() noexcept {
    // The lock may have been held by a thread that does not exist here.
    g_server.lock.clear();
    for (Permit& p : g_server.permits) {
        p.used = p.live = false;
        p.calls.store(0);
    }
    for (int k = 0; k < kMaxClients; ++k) g_server.connected[k] = false, g_server.callbacks[k] = nullptr;
    g_server.workers = -1;
}

}  // namespace apshim::tbb_adapter::tcm

// ---- the entry points TBB links weakly (tcm_server.hpp) ----
using namespace apshim::tbb_adapter::tcm;
#define APSHIM_TCM_API extern "C" __attribute__((visibility("default")))
// Mode 2 forwards to the real libtcm's entry point, looked up once (NextFn, constant-initialized:
// no guard); mode 0 refuses.
#define APSHIM_TCM_FORWARD(name, ...)                                                              \
    do {                                                                                           \
        if (mode() == 2) {                                                                         \
            static apshim::NextFn<decltype(&name)> real{#name};                                    \
            if (auto fn = real.get()) return fn(__VA_ARGS__);                                      \
        }                                                                                          \
        if (mode() != 1) return TCM_RESULT_ERROR_UNKNOWN;                                          \
    } while (0)

APSHIM_TCM_API tcm_result_t tcmConnect(tcm_callback_t callback, tcm_client_id_t* client_id) {
    APSHIM_TCM_FORWARD(tcmConnect, callback, client_id);
    if (!client_id) return TCM_RESULT_ERROR_INVALID_ARGUMENT;
    Guard g;
    for (int k = 0; k < kMaxClients; ++k)
        if (!g_server.connected[k]) {
            g_server.connected[k] = true;
            g_server.callbacks[k] = callback;
            *client_id = static_cast<tcm_client_id_t>(k + 1);
            return TCM_RESULT_SUCCESS;
        }
    return TCM_RESULT_ERROR_UNKNOWN;  // TBB then keeps its own market
}

APSHIM_TCM_API tcm_result_t tcmDisconnect(tcm_client_id_t client_id) {
    APSHIM_TCM_FORWARD(tcmDisconnect, client_id);
    if (client_id < 1 || client_id > kMaxClients) return TCM_RESULT_ERROR_INVALID_ARGUMENT;
    Guard g;
    g_server.connected[client_id - 1] = false;
    g_server.callbacks[client_id - 1] = nullptr;
    return TCM_RESULT_SUCCESS;
}

APSHIM_TCM_API tcm_result_t tcmRequestPermit(tcm_client_id_t client_id, tcm_permit_request_t request, void* callback_arg,
                                             tcm_permit_handle_t* permit_handle, tcm_permit_t* permit);
APSHIM_TCM_API tcm_result_t tcmGetPermitData(tcm_permit_handle_t permit_handle, tcm_permit_t* permit);

tcm_result_t tcmRequestPermit(tcm_client_id_t client_id, tcm_permit_request_t request, void* callback_arg,
                              tcm_permit_handle_t* permit_handle, tcm_permit_t* permit) {
    APSHIM_TCM_FORWARD(tcmRequestPermit, client_id, request, callback_arg, permit_handle, permit);
    if (!permit_handle || client_id < 1 || client_id > kMaxClients || request.max_sw_threads < request.min_sw_threads)
        return TCM_RESULT_ERROR_INVALID_ARGUMENT;
    apshim::tbb_adapter::note_used();  // TBB asking for workers is TBB in use (starts the controller once)
    int limit = tbb_worker_limit();
    {
        Guard g;
        Permit* p = *permit_handle ? permit_of(*permit_handle) : nullptr;
        if (*permit_handle && !p) return TCM_RESULT_ERROR_INVALID_ARGUMENT;
        if (!p) {  // a new permit
            for (Permit& q : g_server.permits)
                if (!q.used) {
                    p = &q;
                    break;
                }
            if (!p) return TCM_RESULT_ERROR_UNKNOWN;
            p->used = p->live = true;
            p->granted = 0;
        }
        p->client = client_id;
        p->arg = callback_arg;
        // tcm_automatic (-1) for either bound: as the machine allows, which TBB never sends here.
        p->min = std::max(request.min_sw_threads, 0);
        p->max = request.max_sw_threads < 0 ? 1 << 20 : request.max_sw_threads;
        p->state = request.flags.request_as_inactive ? TCM_PERMIT_STATE_INACTIVE : TCM_PERMIT_STATE_ACTIVE;
        grant_one(*p, limit);
        *permit_handle = reinterpret_cast<tcm_permit_handle_t>(p);
    }
    return permit ? tcmGetPermitData(*permit_handle, permit) : TCM_RESULT_SUCCESS;
}

tcm_result_t tcmGetPermitData(tcm_permit_handle_t permit_handle, tcm_permit_t* permit) {
    APSHIM_TCM_FORWARD(tcmGetPermitData, permit_handle, permit);
    Permit* p = permit_of(permit_handle);
    if (!p || !permit) return TCM_RESULT_ERROR_INVALID_ARGUMENT;
    Guard g;
    if (permit->concurrencies && permit->size >= 1) permit->concurrencies[0] = p->granted;
    permit->size = 1;
    permit->state = p->state;
    permit->flags = tcm_permit_flags_t{};
    return TCM_RESULT_SUCCESS;
}

APSHIM_TCM_API tcm_result_t tcmReleasePermit(tcm_permit_handle_t permit_handle) {
    APSHIM_TCM_FORWARD(tcmReleasePermit, permit_handle);
    Permit* p = permit_of(permit_handle);
    if (!p) return TCM_RESULT_ERROR_INVALID_ARGUMENT;
    {
        Guard g;
        p->live = false;
        p->granted = 0;
        p->state = TCM_PERMIT_STATE_VOID;
    }
    // TBB frees its client (the callback's argument) once this returns: no callback may still run.
    while (p->calls.load() > 0) sched_yield();
    Guard g;
    p->used = false;
    return TCM_RESULT_SUCCESS;
}

namespace {
tcm_result_t set_state(tcm_permit_handle_t permit_handle, tcm_permit_state_t state) {
    Permit* p = permit_of(permit_handle);
    if (!p) return TCM_RESULT_ERROR_INVALID_ARGUMENT;
    int limit = tbb_worker_limit();
    Guard g;
    if (!p->live) return TCM_RESULT_ERROR_INVALID_ARGUMENT;
    p->state = state;
    grant_one(*p, limit);
    return TCM_RESULT_SUCCESS;
}
}  // namespace

APSHIM_TCM_API tcm_result_t tcmIdlePermit(tcm_permit_handle_t permit_handle) {
    APSHIM_TCM_FORWARD(tcmIdlePermit, permit_handle);
    return set_state(permit_handle, TCM_PERMIT_STATE_IDLE);
}

APSHIM_TCM_API tcm_result_t tcmDeactivatePermit(tcm_permit_handle_t permit_handle) {
    APSHIM_TCM_FORWARD(tcmDeactivatePermit, permit_handle);
    return set_state(permit_handle, TCM_PERMIT_STATE_INACTIVE);
}

APSHIM_TCM_API tcm_result_t tcmActivatePermit(tcm_permit_handle_t permit_handle) {
    APSHIM_TCM_FORWARD(tcmActivatePermit, permit_handle);
    return set_state(permit_handle, TCM_PERMIT_STATE_ACTIVE);
}

// Threads are confined by the shim itself (shim/confine.cpp): nothing to record per thread.
APSHIM_TCM_API tcm_result_t tcmRegisterThread(tcm_permit_handle_t permit_handle) {
    APSHIM_TCM_FORWARD(tcmRegisterThread, permit_handle);
    return permit_of(permit_handle) ? TCM_RESULT_SUCCESS : TCM_RESULT_ERROR_INVALID_ARGUMENT;
}

APSHIM_TCM_API tcm_result_t tcmUnregisterThread() {
    APSHIM_TCM_FORWARD(tcmUnregisterThread);
    return TCM_RESULT_SUCCESS;
}

// What TBB prints under TBB_VERSION=1, in libtcm's "TCM: NAME value" lines.
APSHIM_TCM_API tcm_result_t tcmGetVersionInfo(char* buffer, std::uint32_t buffer_size) {
    APSHIM_TCM_FORWARD(tcmGetVersionInfo, buffer, buffer_size);
    if (!buffer || buffer_size == 0) return TCM_RESULT_ERROR_INVALID_ARGUMENT;
    std::snprintf(buffer, buffer_size, "TCM: VERSION            apshim (permits follow the allotment)\nTCM: TCM_ENABLE         1\n");
    return TCM_RESULT_SUCCESS;
}
