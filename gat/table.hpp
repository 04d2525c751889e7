// The global allocation table: one shared-memory file per user, one row per job.
//
// There is no daemon (Sen's USER-JS strategy): every job's controller updates its own row under
// the table's robust lock, reclaims rows of dead processes, and re-runs DP for everyone. Only the
// controller thread calls this; runtime hooks never do.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gat/layout.hpp"
#include "gat/placement.hpp"

namespace apshim::gat {

struct CreateParams {
    int processors = 1;           // P, used only when this call creates the table
    std::uint32_t est_cycle_us = 5000;
};

struct JobRow {
    int slot = -1;
    pid_t pid = 0;
    std::uint64_t start_time = 0;
    int desire = 0, allotment = 0, usage = 0;
    double eta = 0;
    std::uint64_t heartbeat_age_ns = 0;
    std::string name;
    ProcSet procs;  // the table processors it runs on (placement.hpp)
    std::uint32_t runtimes = 0;  // kRuntime* bits
    bool away = false;  // silent too long: holds no processor until it updates again (table.cpp)
};

// Who holds the table's lock, read without taking it: a job stopped mid-update (SIGSTOP, Ctrl-Z,
// a debugger) holds it until it is resumed, and no job's update gets through meanwhile (the lock
// is robust: a dead holder is repaired, a stopped one can only be waited for).
struct LockHolder {
    pid_t tid = 0;         // the holding thread; 0: the lock is free, or its holder cannot be read
    pid_t pid = 0;         // the job (a live row) that thread belongs to; 0: none of the table's
    std::string name;      // that job's name
    ProcSet procs;         // the processors that job holds (its row, read without the lock)
    bool stopped = false;  // the thread is stopped (state T or t)
    char state = 0;        // its state letter in /proc
    std::uint64_t run_ns = 0;  // the time it has run (thread_run_ns; 0: unknown)
    bool stuck = false;    // judged by judge_stuck
};
// Whether the holder `now` is stuck: stopped, or the same thread that held the lock at the look
// `before` and it has not run since (a frozen cgroup: Slurm's suspend, `docker pause`, whose
// threads read D or S, not T). Callers look only while none of their own tries got the lock in
// between, so the lock did not change hands. Sets now.stuck and returns it.
bool judge_stuck(const LockHolder& before, LockHolder& now);
// One line for messages: "pid 123 (gat_job), which is stopped", "thread 77"; "" for no holder.
std::string describe_holder(const LockHolder& h);

struct Snapshot {
    int processors = 0;
    double est_cycle_ms = 0;
    std::uint64_t updates = 0;
    std::vector<JobRow> jobs;  // in arrival order
    // Read under the table's lock. When the lock was not free within 100 ms (a loaded machine,
    // a stuck holder) the rows are read anyway, for display, and may be mid-update.
    bool consistent = false;
    LockHolder holder;  // who held the lock then, judged across the wait (only when not consistent)
};

class Table {
public:
    enum class Mode { create_if_missing, existing_only };

    // Opens (or creates, race-free) the table at `path`. On failure returns null and sets
    // `error` to one line saying what is wrong with the file.
    static std::unique_ptr<Table> open(const std::string& path, const CreateParams& params, std::string& error,
                                       Mode mode = Mode::create_if_missing);
    ~Table();
    Table(const Table&) = delete;
    Table& operator=(const Table&) = delete;

    int processors() const { return P_; }
    double est_cycle_ms() const { return est_cycle_us_ / 1000.0; }
    const std::string& path() const { return path_; }

    // Adds this process (pid, start time) as a job with `desire`; a row left by this same
    // process before an exec() is taken over. Returns the slot, kJoinBusy (the lock was not
    // available for 1 s: try again later) or -1 (table full; `error` says why).
    static constexpr int kJoinBusy = -2;
    int join(int desire, double eta, std::string& error);
    // Writes the job's desire and usage, reclaims dead rows, re-runs DP and placement; returns
    // the job's allotment (>= 1), or -1 when the lock could not be taken within timeout_ns (keep
    // the old allotment) or the row was lost and could not be re-joined. `procs`, when given,
    // receives the processors the job runs on (allotment many; untouched on -1), and `idle`, when
    // given, the processors of [0, P) that no live job holds (the job may use them too until
    // someone takes them: a DP run that changes that set wakes every job, see changes()).
    // `runtimes` (kRuntime* bits) is written into the row for `apshim status`.
    int update(int& slot, int desire, int usage, std::uint64_t timeout_ns, ProcSet* procs = nullptr,
               std::uint32_t runtimes = 0, ProcSet* idle = nullptr);
    // Removes the job's row and hands its processors to the others.
    void leave(int slot);
    // Changes the table's P (a container's CPU quota changed in place): DP re-balances for the new
    // P at once, and every job sharing the table follows at its next update (each lock re-reads
    // P). False when the lock was not free within timeout_ns.
    bool set_processors(int P, std::uint64_t timeout_ns);
    // A DP run in one job that changes another job's allotment or processors bumps that job's
    // row's change counter and wakes it (only the jobs whose rows changed). changes(slot): the
    // counter now; wait_for_change(): sleeps until it differs from `seen` or timeout_ns passes;
    // notify_change(slot): bump and wake (also how a process wakes its own waiter to stop).
    std::uint32_t changes(int slot) const;
    void wait_for_change(int slot, std::uint32_t seen, std::uint64_t timeout_ns) const;
    void notify_change(int slot);
    // Lock-free and approximate (rows may be mid-update): has a live job other than `slot` less
    // than it desires? Scans every row: once per est_cycle, not per poll (shim/controller.cpp).
    bool others_want_more(int slot) const;
    // The job's allotment and processors as DP last set them (lock held for the read, at most
    // timeout_ns), and the idle processors as update() gives them; 0 when the row is not ours, -1
    // when the lock was busy.
    int current(int slot, ProcSet* procs, std::uint64_t timeout_ns, ProcSet* idle = nullptr);
    // Reclaims rows of dead processes now; returns how many (those the lock's own repair reclaimed,
    // when the last holder died holding it, included), -1 when the lock was busy.
    int gc();
    Snapshot snapshot();
    // Who holds the lock now (LockHolder): read from the lock's futex word, which a robust mutex
    // keeps the holding thread's id in (glibc; elsewhere always "free").
    LockHolder lock_holder() const;
    // The same, judged against the previous look `before` (judge_stuck): what callers that look
    // while their updates fail keep from one look to the next.
    LockHolder lock_holder(const LockHolder& before) const;

    // Lock access for tests and tools: take the table lock the way update() does.
    // Returns false on timeout, or at once when the lock is unrecoverable (a holder died and
    // whoever got it next released it without repair). `recovered` is set when the previous
    // holder had died.
    bool lock(std::uint64_t timeout_ns, bool* recovered = nullptr);
    void unlock();
    // A lock() found the lock unrecoverable: this table can no longer be updated by anyone.
    bool unrecoverable() const { return unrecoverable_; }

private:
    Table() = default;
    // How reclaim_dead tells a row's owner alive. kill(pid, 0) alone (every update: a process gone
    // and reaped), or with /proc too (its state and start time: a zombie, a reused pid), for the
    // rows silent for an est_cycle (once an est_cycle, table.cpp) or for every row (after a
    // holder died in the lock, `apshim gc`).
    enum class Scan { cheap, silent_rows, all_rows };
    // Frees the rows of dead processes (returns how many) and the processors of rows gone away
    // since the last DP run (table.cpp: away; counted in *went_away): both are departures to DP.
    int reclaim_dead(Scan scan, std::uint64_t now, int* went_away = nullptr);
    // The scan an update or a join at `now` makes: silent_rows once an est_cycle, else cheap.
    Scan scan_due(std::uint64_t now) const;
    // Notes in moved_ the rows other than `changed_slot` that got another allotment or
    // processors: unlock() wakes them once the lock is released.
    void run_dp(int changed_slot, int old_desire, bool departures);
    int find_row(pid_t pid, std::uint64_t start_time) const;
    void refresh_processors();
    ProcSet idle_locked() const;  // lock held: [0, P) less every live row's processors

    Layout* map_ = nullptr;
    int fd_ = -1;
    int P_ = 1;
    std::uint32_t est_cycle_us_ = 5000;
    std::string path_;
    pid_t pid_ = 0;
    std::uint64_t start_time_ = 0;
    double eta_ = 0.5;
    bool unrecoverable_ = false;
    int recovered_rows_ = 0;  // dead rows the last lock() reclaimed while repairing the table
    std::vector<int> moved_;  // rows the DP runs under the current hold of the lock changed (run_dp)
};

}  // namespace apshim::gat
