// The controller: one thread per process that, every est_cycle, samples the adapters,
// estimates the job's desire, publishes it in the GAT, and tells the adapters how many threads
// may execute work (Sen §6.1: estimate, maintain the allocation, adjust usage).
#pragma once

#include <signal.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

#include "adapters/adapter.hpp"
#include "gat/placement.hpp"
#include "shim/options.hpp"

namespace apshim {

namespace gat {
class Table;
}

// How a process's allotment is split when several runtimes are in use (n >= 1 entries).
// Each runtime's limit counts its own master (adapters/adapter.hpp), and a master is a thread
// the program runs anyway: the host thread, or, when one runtime's work calls the other (a TBB
// task running an OpenMP loop), a worker of the outer runtime. So every runtime gets 1 for its
// master plus a part of the other allotment - 1 threads in proportion to its measured busy
// time (equal parts when nothing was measured). With one runtime, share = allotment.
// `previous`: the split in force for the same allotment and runtimes, or null. It is kept while no
// runtime's share would move by more than one: two runtimes that read about as busy flipped a 4/5
// split to 5/4 and back on noise, cycle after cycle (TBB running OpenMP loops at APSHIM_P=8), and
// each flip raised one runtime at once while the other's threads were still inside their tasks, or
// its teams still formed at their recent width (omp_state.hpp, RecentMax): the two together
// then ran up to 12 threads at once in an allotment of 8 (mixed.gcc.one_allotment, 1 run in 4).
// The busy times are each runtime's average over about kSplitCycles cycles, not the last cycle's:
// in the same program the last cycle's ratio still swung between 1:2 and 1:1 with the phase of
// each TBB round (a 3/6 split flipping to 5/4 and back every 5-400 ms), and TBB raised from 3 to 5
// beside teams still 6 wide made 10 (1 run in 4 to 10 failed again, 2026-11-28).
inline constexpr std::uint64_t kSplitCycles = 16;
void split_allotment(int allotment, const std::uint64_t* busy, int n, int* share, const int* previous = nullptr) noexcept;

// The job's CPU quota was read again (once a second): `now` against `followed`, the quota the
// table's P last followed. Where the table was sized by the old quota (its P, `table_P`, is
// still that) it takes the new one through `try_set`, which fails while another process holds
// the table's lock. Returns the quota to remember: the new one once the table has it (or never
// had the old one), the old one after a failed try, so that the next check tries again. Before,
// a try that met `apshim status` holding the lock still remembered the new quota, and the table
// kept the old P for good (shim.cgroup_quota under TSan in CI, 2026-11-29).
template <class TrySet>
int quota_to_follow(int followed, int now, int table_P, TrySet try_set) {
    if (now == followed) return followed;
    if (table_P == followed && !try_set(now)) return followed;
    return now;
}

class Controller {
public:
    static constexpr int kMaxAdapters = 4;

    explicit Controller(const Options& options);
    ~Controller();

    // Registers an adapter (idempotent, lock-free when already known) and starts the thread on
    // the first call. Safe inside runtime internals.
    void adapter_started(Adapter& a) noexcept;
    // Stops the thread (joins it), leaves the table, releases every adapter. Idempotent.
    void shutdown() noexcept;
    // A hook asked back the processors the job lent while quiet (Host::reclaim): wake the
    // thread. Any thread, lock-free, one futex wake.
    void wake_to_reclaim() noexcept;
    // fork() support: prepare/parent/child handlers (see preload.cpp).
    void before_fork() noexcept;
    void after_fork_parent() noexcept;
    void after_fork_child() noexcept;

    // P and est_cycle (ns) of the table the controller opened; 0 until then. Lock-free: hooks
    // read them (through the Host, adapters/adapter.hpp).
    int table_processors() const noexcept { return table_P_.load(std::memory_order_acquire); }
    std::uint64_t table_cycle_ns() const noexcept { return table_cycle_ns_.load(std::memory_order_acquire); }
    // Some other job of the table has fewer processors than it desires, as the last cycle read
    // the table (true before the first read: until then nobody is known not to wait). Lock-free.
    bool others_want_more() const noexcept { return others_want_more_.load(std::memory_order_relaxed); }

private:
    struct Impl;
    void start_thread() noexcept;
    static void* thread_main(void* self) noexcept;
    // The thread's steps (controller.cpp says which hold mutex_).
    void run() noexcept;
    bool open_table() noexcept;
    bool join_table() noexcept;
    void let_adapters_go() noexcept;
    void first_allotment() noexcept;
    void cycle_loop(std::unique_lock<std::mutex>& g) noexcept;
    void cycle(std::uint64_t now) noexcept;
    bool follow_table() noexcept;
    void apply_allotment(bool confine_now) noexcept;
    // The confinement check (confine_check.hpp) runs: on by option and confinement not turned off.
    bool checking() const noexcept;
    // Whether the allotment now confines the job below the CPUs it may use (the check's
    // `confinable`).
    bool allotment_confines() const noexcept;
    // The check's start has just begun: its threads spread over the job's CPUs (confine::spread).
    void spread_for_start() noexcept;
    // The processors the job runs on now: its own, and the idle ones while it may use them (the
    // width check's narrowing aside).
    gat::ProcSet running_procs() const noexcept;
    void follow_quota(std::uint64_t now) noexcept;
    void read_others() noexcept;
    // Lending while quiet (APSHIM_LEND_MS; controller.cpp says when).
    bool lending_worthwhile() const noexcept;
    bool quiet_now(std::uint64_t* entries = nullptr) noexcept;
    void poll_quiet(std::uint64_t now) noexcept;
    bool lend() noexcept;
    bool reclaim() noexcept;
    void restart_window() noexcept;

    Options opts_;
    std::atomic<Adapter*> adapters_[kMaxAdapters] = {};
    // Held by the thread while it calls adapters (setup, first allotment, one cycle: never while
    // it waits for the table's lock in join) and by fork's prepare handler.
    std::mutex mutex_;
    std::atomic<bool> started_{false};
    std::atomic<bool> stopping_{false};
    // let_adapters_go() ran (no table, or shutdown): an adapter that starts later goes at once.
    std::atomic<bool> adapters_let_go_{false};
    std::atomic<std::uint32_t> wake_{0};
    // The table and row the cycles wait on (the row's change counter, gat/table.hpp), once they
    // run: shutdown() bumps it to wake the thread. The table lives as long as the controller.
    std::atomic<gat::Table*> cycling_table_{nullptr};
    std::atomic<int> cycling_slot_{-1};
    std::atomic<int> table_P_{0};
    std::atomic<std::uint64_t> table_cycle_ns_{0};
    std::atomic<bool> others_want_more_{true};
    char host_name_[16] = "";  // name of the thread that started the controller (runtime threads created from here inherit it)
    bool thread_joinable_ = false;
    unsigned long thread_ = 0;
    std::unique_ptr<Impl> impl_;  // table, estimator, trace: owned by the thread
};

}  // namespace apshim
