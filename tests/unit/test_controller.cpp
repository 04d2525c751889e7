// The controller thread end to end with a fake runtime: a lone job starts at P, gives
// processors away in a serial phase and explores from desire 1 back to P, a 2 + 2 split between two processes, leaving the
// table at shutdown, and staying unthrottled on a bad table.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <string>
#include <memory>
#include <thread>

#include "adapters/adapter.hpp"
#include "adapters/common/clock.hpp"
#include "gat/table.hpp"
#include "shim/controller.hpp"
#include "tests/unit/temp_dir.hpp"

namespace {

// A runtime whose threads are busy a given fraction of the time they are allowed to run.
class FakeRuntime final : public apshim::Adapter {
public:
    std::atomic<double> busy_fraction{1.0};
    std::atomic<int> limit{0};
    std::atomic<int> max_limit{0};
    std::atomic<int> first_limit{0};
    std::atomic<int> calls{0};
    std::atomic<bool> released{false};

    const char* name() const override { return "fake"; }
    apshim::Sample sample() override {
        std::uint64_t now = apshim::now_ns();
        std::uint64_t dt = last_ ? now - last_ : 0;
        last_ = now;
        int p = limit.load() > 0 ? limit.load() : 1;
        apshim::Sample s;
        s.usage = p;
        s.busy_ns = static_cast<std::uint64_t>(busy_fraction.load() * p * static_cast<double>(dt));
        s.used = true;
        return s;
    }
    void set_active(int n) override {
        limit.store(n);
        if (n > max_limit.load()) max_limit.store(n);
        int none = 0;
        first_limit.compare_exchange_strong(none, n);
        calls.fetch_add(1);
    }
    int active() const override { return limit.load(); }
    void release() override { released.store(true); }

private:
    std::uint64_t last_ = 0;
};

std::string temp_gat() {
    return apshim_test::temp_dir("apshim-ctl-") + "/gat";
}

apshim::Options options_for(const std::string& gat, int P) {
    apshim::Options o;
    o.gat = gat;
    o.P = P;
    o.est_cycle_ms = 5;
    o.eta = 0.5;
    return o;
}

template <class Pred>
bool wait_until(Pred pred, double seconds) {
    auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < end) {
        if (pred()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return pred();
}

// Forks a process that holds the table lock of `gat` for 1.5 s; returns once it holds it.
pid_t hold_table_lock(const std::string& gat) {
    int locked[2];
    if (pipe(locked) != 0) return -1;
    pid_t pid = fork();
    if (pid == 0) {
        std::string e;
        auto mine = apshim::gat::Table::open(gat, {}, e, apshim::gat::Table::Mode::existing_only);
        if (!mine || !mine->lock(1000000000ull)) _exit(1);
        char c = 1;
        if (write(locked[1], &c, 1) != 1) _exit(1);
        std::this_thread::sleep_for(std::chrono::milliseconds(1500));
        mine->unlock();
        _exit(0);
    }
    char c;
    if (pid > 0 && read(locked[0], &c, 1) != 1) pid = -1;
    close(locked[0]);
    close(locked[1]);
    return pid;
}

// Reaps pid; true when it exited with status 0.
bool exited_ok(pid_t pid) {
    int status = 0;
    return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

TEST_CASE("a busy job alone starts at P, gives processors back when serial and climbs back to P", "[controller]") {
    std::string gat = temp_gat();
    auto opts = options_for(gat, 8);
    opts.trace = gat + ".trace.csv";
    opts.use_idle = false;  // held to its allotment: alone, the idle processors would keep it at 8 (next test)
    auto c = std::make_unique<apshim::Controller>(opts);
    FakeRuntime rt;
    c->adapter_started(rt);
    REQUIRE(wait_until([&] { return rt.calls.load() > 0; }, 5.0));
    CHECK(rt.first_limit.load() == 8);  // joined at the width its runtime runs, alone: all of P
    rt.busy_fraction.store(0.0);        // serial phase: nobody in the runtime works
    REQUIRE(wait_until([&] { return rt.limit.load() == 1; }, 5.0));
    rt.busy_fraction.store(1.0);        // parallel again: WSAP explores upwards from 1
    REQUIRE(wait_until([&] { return rt.limit.load() == 8; }, 5.0));
    c->shutdown();
    CHECK(rt.released.load());
    // The trace shows the climb: allotment 8 within ceil(log2 8) + 2 cycles of the last cycle
    // that ran on one processor.
    FILE* f = std::fopen(opts.trace.c_str(), "r");
    REQUIRE(f);
    char line[256];
    int rows = 0, last_one = -1, first_full_after = -1;
    REQUIRE(std::fgets(line, sizeof line, f));  // header
    while (std::fgets(line, sizeof line, f)) {
        double t, r, b;
        int d, a, u;
        REQUIRE(std::sscanf(line, "%lf,%d,%d,%d,%lf,%lf", &t, &d, &a, &u, &r, &b) == 6);
        if (u == 1) last_one = rows, first_full_after = -1;
        if (a == 8 && last_one >= 0 && first_full_after < 0) first_full_after = rows;
        ++rows;
    }
    std::fclose(f);
    REQUIRE(last_one >= 0);
    CHECK(first_full_after > last_one);
    CHECK(first_full_after - last_one <= static_cast<int>(std::ceil(std::log2(8))) + 2);
    // Shutdown left the table.
    std::string err;
    auto t = apshim::gat::Table::open(gat, {}, err, apshim::gat::Table::Mode::existing_only);
    REQUIRE(t);
    CHECK(t->snapshot().jobs.empty());
}

TEST_CASE("a serial job alone keeps the idle processors, and a busy co-runner's allotment takes them at once",
          "[controller][multiprocess][idle]") {
    std::string gat = temp_gat();
    // The co-runner's process is forked first, before any thread (ThreadSanitizer cannot start
    // threads in a child forked from a multi-threaded process); it starts its controller when told.
    int to_child[2];
    REQUIRE(pipe(to_child) == 0);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {  // a busy co-runner: desire climbs to 8, DP gives it 7
        char cmd;
        if (read(to_child[0], &cmd, 1) != 1) _exit(1);
        auto cc = std::make_unique<apshim::Controller>(options_for(gat, 8));
        FakeRuntime busy;
        cc->adapter_started(busy);
        if (read(to_child[0], &cmd, 1) != 1) _exit(1);
        cc->shutdown();
        _exit(0);
    }
    auto c = std::make_unique<apshim::Controller>(options_for(gat, 8));
    FakeRuntime rt;
    rt.busy_fraction.store(0.0);  // serial: its desire falls to 1 ...
    c->adapter_started(rt);
    std::string err;
    auto t = apshim::gat::Table::open(gat, {8, 5000}, err);
    REQUIRE(t);
    auto alone_serial = [&] {
        auto s = t->snapshot();
        return s.jobs.size() == 1 && s.jobs[0].desire == 1 && s.jobs[0].allotment == 1;
    };
    REQUIRE(wait_until(alone_serial, 5.0));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // ten cycles at desire 1
    CHECK(alone_serial());
    CHECK(rt.limit.load() == 8);  // ... but nobody holds the other 7: it may still run 8 threads
    char go = 1;
    REQUIRE(write(to_child[1], &go, 1) == 1);  // the co-runner starts
    auto squeezed = [&] {
        auto s = t->snapshot();
        return s.jobs.size() == 2 && s.jobs[1].allotment == 7 && rt.limit.load() == 1;
    };
    CHECK(wait_until(squeezed, 5.0));
    REQUIRE(write(to_child[1], &go, 1) == 1);  // ... and leaves
    CHECK(exited_ok(pid));
    CHECK(wait_until([&] { return rt.limit.load() == 8; }, 5.0));  // idle again once the co-runner left
    c->shutdown();
}

TEST_CASE("two busy processes on P = 4 settle at 2 + 2, and one leaving gives the other 4", "[controller][multiprocess]") {
    std::string gat = temp_gat();
    int to_child[2];
    REQUIRE(pipe(to_child) == 0);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        auto c = std::make_unique<apshim::Controller>(options_for(gat, 4));
        FakeRuntime rt;
        c->adapter_started(rt);
        char cmd;
        if (read(to_child[0], &cmd, 1) != 1) _exit(1);
        c->shutdown();
        _exit(0);
    }
    auto c = std::make_unique<apshim::Controller>(options_for(gat, 4));
    FakeRuntime rt;
    c->adapter_started(rt);
    std::string err;
    auto t = apshim::gat::Table::open(gat, {4, 5000}, err);
    REQUIRE(t);
    auto split = [&] {
        auto s = t->snapshot();
        return s.jobs.size() == 2 && s.jobs[0].allotment == 2 && s.jobs[1].allotment == 2 && rt.limit.load() == 2;
    };
    CHECK(wait_until(split, 5.0));
    char go = 1;
    REQUIRE(write(to_child[1], &go, 1) == 1);
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK(wait_until([&] { return rt.limit.load() == 4; }, 5.0));
    c->shutdown();
}

// A fake runtime that, at the controller's first set_active (in first_allotment, just after its
// first update of the table), has a co-runner join before it returns: the co-runner's DP run then
// falls between that update and the controller's first wait for a change of its row.
class JoinAtFirstAllotment final : public apshim::Adapter {
public:
    FakeRuntime inner;
    int go_fd = -1, joined_fd = -1;

    const char* name() const override { return "fake"; }
    apshim::Sample sample() override { return inner.sample(); }
    void set_active(int n) override {
        char c = 1;
        const bool joined = inner.calls.load() == 0 && write(go_fd, &c, 1) == 1 && read(joined_fd, &c, 1) == 1;
        inner.set_active(n);
        // Told after the limit is recorded: the test reads first_limit as soon as it sees this (told
        // before, under TSan's timing it once read 0, CI of 2026-12-06).
        if (joined) co_runner_joined.store(true);
    }
    int active() const override { return inner.active(); }
    void release() override { inner.release(); }
    std::atomic<bool> co_runner_joined{false};
};

TEST_CASE("a co-runner that joins just after the job's first update is followed at once, not at the next cycle",
          "[controller][multiprocess]") {
    std::string gat = temp_gat();
    int go[2], joined[2], leave[2];
    REQUIRE(pipe(go) == 0);
    REQUIRE(pipe(joined) == 0);
    REQUIRE(pipe(leave) == 0);
    pid_t pid = fork();  // before any thread (see above)
    REQUIRE(pid >= 0);
    if (pid == 0) {  // a stand-in co-runner: joins wanting all 4 when told, leaves when told
        char c;
        if (read(go[0], &c, 1) != 1) _exit(1);
        std::string e;
        auto mine = apshim::gat::Table::open(gat, {}, e, apshim::gat::Table::Mode::existing_only);
        int slot = mine ? mine->join(4, 0.5, e) : -1;
        if (slot < 0 || write(joined[1], &c, 1) != 1) _exit(1);
        if (read(leave[0], &c, 1) != 1) _exit(1);
        mine->leave(slot);
        _exit(0);
    }
    // The child's ends closed here: a child that died makes the reads below return, not hang.
    for (int fd : {go[0], joined[1], leave[0]}) close(fd);
    auto opts = options_for(gat, 4);
    opts.est_cycle_ms = 10000;  // the job's first cycle comes 10 s after its start
    opts.use_idle = false;
    auto c = std::make_unique<apshim::Controller>(opts);
    JoinAtFirstAllotment rt;
    rt.go_fd = go[1];
    rt.joined_fd = joined[0];
    c->adapter_started(rt);
    REQUIRE(wait_until([&] { return rt.co_runner_joined.load(); }, 5.0));
    CHECK(rt.inner.first_limit.load() == 4);  // alone at its first update
    // DP split the table 2 + 2 as the co-runner joined; the job follows that long before its first
    // cycle (before, it waited for a change from the counter's value after the co-runner's bump).
    CHECK(wait_until([&] { return rt.inner.limit.load() == 2; }, 3.0));
    char cmd = 1;
    REQUIRE(write(leave[1], &cmd, 1) == 1);
    CHECK(exited_ok(pid));
    CHECK(wait_until([&] { return rt.inner.limit.load() == 4; }, 3.0));  // and its leaving
    c->shutdown();
    for (int fd : {go[1], joined[0], leave[1]}) close(fd);
}

TEST_CASE("a controller facing a bad table never throttles", "[controller]") {
    std::string gat = temp_gat();
    FILE* f = std::fopen(gat.c_str(), "w");
    std::fputs("not a table", f);
    std::fclose(f);
    auto c = std::make_unique<apshim::Controller>(options_for(gat, 4));
    FakeRuntime rt;
    c->adapter_started(rt);
    // Let go at once, not at exit: an OpenMP team is timed from its first fork until the first
    // allotment (omp_adapter.cpp: note_fork), which would otherwise never come.
    CHECK(wait_until([&] { return rt.released.load(); }, 5.0));
    CHECK(rt.calls.load() == 0);
    // A second runtime, started after that (libomp after libgomp), goes at once too.
    FakeRuntime later;
    c->adapter_started(later);
    CHECK(later.released.load());
    CHECK(later.calls.load() == 0);
    c->shutdown();
}

TEST_CASE("a runtime that starts after shutdown runs unthrottled", "[controller]") {
    auto c = std::make_unique<apshim::Controller>(options_for(temp_gat(), 4));
    c->shutdown();
    FakeRuntime rt;
    c->adapter_started(rt);  // a region in an exit handler, after the shim's own
    CHECK(rt.released.load());
    CHECK(rt.calls.load() == 0);
}

TEST_CASE("a job whose join finds the table locked for longer than 1 s joins later", "[controller][multiprocess]") {
    std::string gat = temp_gat();
    std::string err;
    auto t = apshim::gat::Table::open(gat, {4, 5000}, err);
    REQUIRE(t);
    pid_t pid = hold_table_lock(gat);  // 1.5 s: a join's first 1 s attempt times out
    REQUIRE(pid > 0);
    auto ctl = std::make_unique<apshim::Controller>(options_for(gat, 4));
    FakeRuntime rt;
    ctl->adapter_started(rt);
    CHECK(wait_until([&] { return rt.calls.load() > 0 && t->snapshot().jobs.size() == 1; }, 8.0));
    CHECK(exited_ok(pid));
    ctl->shutdown();
}

TEST_CASE("fork() in the host does not wait while the controller's join waits for the table lock", "[controller][multiprocess][fork]") {
    std::string gat = temp_gat();
    std::string err;
    auto t = apshim::gat::Table::open(gat, {4, 5000}, err);
    REQUIRE(t);
    pid_t pid = hold_table_lock(gat);  // 1.5 s: a join's first 1 s attempt times out
    REQUIRE(pid > 0);
    auto ctl = std::make_unique<apshim::Controller>(options_for(gat, 4));
    FakeRuntime rt;
    ctl->adapter_started(rt);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the controller is inside join now
    // What pthread_atfork's prepare and parent handlers do around a host's fork() (shim/fork.cpp).
    // Holding the mutex through join made this wait for the rest of join's second (~700 ms).
    auto t0 = std::chrono::steady_clock::now();
    ctl->before_fork();
    ctl->after_fork_parent();
    double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    CHECK(waited < 0.25);
    CHECK(rt.calls.load() == 0);  // still joining: no cycle ran meanwhile
    CHECK(wait_until([&] { return rt.calls.load() > 0 && t->snapshot().jobs.size() == 1; }, 8.0));
    CHECK(exited_ok(pid));
    ctl->shutdown();
}

TEST_CASE("the allotment is split between runtimes by measured busy time, one master each", "[controller][split]") {
    int share[4] = {};
    std::uint64_t one[1] = {123};
    apshim::split_allotment(6, one, 1, share);
    CHECK(share[0] == 6);  // one runtime: the whole allotment

    std::uint64_t even[2] = {500, 500};
    apshim::split_allotment(7, even, 2, share);
    CHECK(share[0] == 4);  // 1 + 3 of the 6 spare threads
    CHECK(share[1] == 4);

    std::uint64_t skewed[2] = {900, 100};
    apshim::split_allotment(11, skewed, 2, share);
    CHECK(share[0] == 10);
    CHECK(share[1] == 2);

    std::uint64_t idle[3] = {0, 0, 0};
    apshim::split_allotment(7, idle, 3, share);
    CHECK(share[0] + share[1] + share[2] == 7 + 2);  // masters on top of the allotment
    for (int i = 0; i < 3; ++i) CHECK(share[i] >= 1);

    std::uint64_t any[2] = {0, 42};
    apshim::split_allotment(1, any, 2, share);
    CHECK(share[0] == 1);  // allotment 1: each runtime keeps only its master
    CHECK(share[1] == 1);
}

TEST_CASE("a split in force is kept while no share would move by more than one", "[controller][split]") {
    // TBB running OpenMP loops: both read about as busy, and the noise flips 4/5 to 5/4.
    int share[2] = {};
    int in_force[2] = {4, 5};
    std::uint64_t noise[2] = {520, 480};
    apshim::split_allotment(8, noise, 2, share, in_force);
    CHECK(share[0] == 4);
    CHECK(share[1] == 5);
    apshim::split_allotment(8, noise, 2, share);  // without it: the new split
    CHECK(share[0] == 5);
    CHECK(share[1] == 4);
    // A real change of demand moves it.
    std::uint64_t skewed[2] = {800, 200};
    apshim::split_allotment(8, skewed, 2, share, in_force);
    CHECK(share[0] == 7);
    CHECK(share[1] == 2);
}

TEST_CASE("the table's P follows a changed CPU quota, and a try that finds the table locked is made again", "[controller][quota]") {
    int table_P = 1, tries = 0;
    bool busy = true;
    auto try_set = [&](int P) {
        ++tries;
        if (busy) return false;
        table_P = P;
        return true;
    };
    // Unchanged quota: nothing tried.
    CHECK(apshim::quota_to_follow(1, 1, table_P, try_set) == 1);
    CHECK(tries == 0);
    // Lifted to 2 while another process holds the lock (`apshim status`): the old quota is kept...
    int followed = apshim::quota_to_follow(1, 2, table_P, try_set);
    CHECK(followed == 1);
    CHECK(table_P == 1);
    // ... so the next check tries again, and then the table follows.
    busy = false;
    followed = apshim::quota_to_follow(followed, 2, table_P, try_set);
    CHECK(followed == 2);
    CHECK(table_P == 2);
    CHECK(tries == 2);
    // A table whose P another job already moved (or that was never the quota's) is left alone.
    table_P = 8;
    CHECK(apshim::quota_to_follow(2, 3, table_P, try_set) == 3);
    CHECK(table_P == 8);
    CHECK(tries == 2);
}
