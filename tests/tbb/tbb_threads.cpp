// Application threads coming and going around oneTBB.
//   tbb_threads first THREADS
//       THREADS threads released together make the process's first TBB calls at once (each
//       runs a parallel_for with a context of its own): the shim's hooks see their first
//       calls race (adapters/tbb/task_hooks.cpp, in_tbb). Run under TSan's shim.
//   tbb_threads churn IDLE WORKERS MS
//       IDLE threads, one after another, each run a tiny TBB loop and end; then WORKERS threads,
//       one after another, each spin MS ms inside a task_arena(1) of their own (only that
//       thread executes its tasks, so only its counter slot can measure them).
// stdout: "threads checksum=<c>".
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {

std::atomic<unsigned long long> g_sum{0};

void small_loop(int seed) {
    tbb::task_group_context ctx;
    tbb::parallel_for(
        tbb::blocked_range<int>(0, 64),
        [&](const tbb::blocked_range<int>& r) {
            unsigned long long s = 0;
            for (int i = r.begin(); i != r.end(); ++i) s += static_cast<unsigned long long>(i ^ seed);
            g_sum.fetch_add(s);
        },
        ctx);
}

void spin_ms(int ms, int seed) {
    tbb::task_arena arena(1);  // this thread alone executes the work
    arena.execute([&] {
        tbb::parallel_for(tbb::blocked_range<int>(0, 4, 1), [&](const tbb::blocked_range<int>& r) {
            auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(ms * 1000 / 4);
            unsigned long long s = 0;
            while (std::chrono::steady_clock::now() < end) s += static_cast<unsigned long long>(r.begin() ^ seed);
            g_sum.fetch_add(s & 1);
        });
    });
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 3 && !std::strcmp(argv[1], "first")) {
        int n = std::atoi(argv[2]);
        std::atomic<int> ready{0};
        std::atomic<bool> go{false};
        std::vector<std::thread> threads;
        for (int t = 0; t < n; ++t)
            threads.emplace_back([&, t] {
                ready.fetch_add(1);
                while (!go.load()) {
                }
                small_loop(t);
            });
        while (ready.load() < n) {
        }
        go.store(true);
        for (auto& t : threads) t.join();
    } else if (argc == 5 && !std::strcmp(argv[1], "churn")) {
        int idle = std::atoi(argv[2]), workers = std::atoi(argv[3]), ms = std::atoi(argv[4]);
        for (int t = 0; t < idle; ++t) std::thread([t] { small_loop(t); }).join();
        for (int t = 0; t < workers; ++t) std::thread([=] { spin_ms(ms, t); }).join();
    } else {
        std::fprintf(stderr, "usage: tbb_threads first THREADS | churn IDLE WORKERS MS\n");
        return 2;
    }
    std::printf("threads checksum=%llu\n", g_sum.load());
    return 0;
}
