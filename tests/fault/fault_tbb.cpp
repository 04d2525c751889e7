// A oneTBB program for the fault campaign: ROUNDS rounds of a parallel_for over ITEMS items of
// busy work (about ITEM_US microseconds each) that injects, on request, a fault from inside the
// parallel_for body (i.e. on whichever thread runs that item: a TBB worker or the main thread):
//   none         no fault
//   fork_uexit   fork(); the child does serial work and _exit(0)s
//   fork_exit    fork(); the child exit(0)s (atexit handlers and static destructors run in it)
//                (oneTBB itself crashes in the child's exit(), shim or not: manual checks only)
//   fork_exec    fork(); the child execs this program in mode "child" (a job of its own)
//   exit_worker  after the checksum is printed, a TBB worker thread calls exit(0) mid-loop
//                (oneTBB itself crashes in this case, shim or not: kept for manual checks only)
//   exit_main    after the checksum is printed, the main thread calls exit(0) mid-loop
//   child        what fork_exec runs (as `child 4 40 1000`, about 160 ms of work): no fault
//   fault_tbb MODE ROUNDS ITEMS ITEM_US
// stdout: "fault_tbb mode=MODE checksum=C[ child=ok]": C = sum over rounds r and items i of
// ((r * ITEMS + i) * 2654435761) % 1000003, independent of threads. Exits 1 if a child failed.
#include <oneapi/tbb/parallel_for.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace {

std::uint64_t work(std::uint64_t seed, int us) {
    std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
    for (int i = 0;; ++i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        if ((i & 255) == 0 && std::chrono::steady_clock::now() >= end) break;
    }
    asm volatile("" : : "r"(x));
    return seed * 2654435761u % 1000003u;
}

const char* g_self = nullptr;
std::atomic<bool> g_fired{false};
pid_t g_child = -1;

// Runs in the body of one item, on whatever thread executes it.
void fork_here(const char* mode) {
    if (g_fired.exchange(true)) return;
    pid_t pid = fork();
    if (pid == 0) {
        if (std::strcmp(mode, "fork_exec") == 0) {
            execl(g_self, g_self, "child", "4", "40", "1000", static_cast<char*>(nullptr));
            _exit(127);
        }
        std::uint64_t s = 0;
        for (std::uint64_t i = 0; i < 1000; ++i) s += work(i, 0);
        if (std::strcmp(mode, "fork_exit") == 0) std::exit(s > 0 ? 0 : 3);
        _exit(s > 0 ? 0 : 3);
    }
    g_child = pid;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 5) {
        std::fprintf(stderr, "usage: fault_tbb MODE ROUNDS ITEMS ITEM_US\n");
        return 2;
    }
    g_self = argv[0];
    const char* mode = argv[1];
    int rounds = std::atoi(argv[2]), items = std::atoi(argv[3]), item_us = std::atoi(argv[4]);
    bool forks = std::strncmp(mode, "fork_", 5) == 0;
    const std::thread::id main_id = std::this_thread::get_id();
    std::uint64_t checksum = 0;
    for (int r = 0; r < rounds; ++r) {
        std::atomic<std::uint64_t> sum{0};
        tbb::parallel_for(0, items, [&](int i) {
            if (forks && r == rounds / 2 && i == items / 2) fork_here(mode);
            sum.fetch_add(work(static_cast<std::uint64_t>(r) * items + i, item_us), std::memory_order_relaxed);
        });
        checksum += sum.load();
    }
    std::printf("fault_tbb mode=%s checksum=%llu", mode, static_cast<unsigned long long>(checksum));
    if (forks) {
        int st = 0;
        bool ok = g_child > 0 && waitpid(g_child, &st, 0) == g_child && WIFEXITED(st) && WEXITSTATUS(st) == 0;
        std::printf(" child=%s\n", ok ? "ok" : "failed");
        return ok ? 0 : 1;
    }
    std::printf("\n");
    if (std::strncmp(mode, "exit_", 5) == 0) {
        std::fflush(stdout);
        const bool worker = std::strcmp(mode, "exit_worker") == 0;
        // Another round while one thread leaves the program through exit(): the others keep
        // running items, are parked, or wait for work when atexit handlers run.
        tbb::parallel_for(0, items, [&](int i) {
            bool on_main = std::this_thread::get_id() == main_id;
            if ((worker ? !on_main : (on_main && i >= items / 2)) && !g_fired.exchange(true)) std::exit(0);
            work(static_cast<std::uint64_t>(i), item_us);
        });
        std::exit(0);  // no worker ran an item (allotment 1): leave from the main thread
    }
    return 0;
}
