// Work only a TBB worker can take: a task_arena with no slot for application threads
// (task_arena(1, 0)), into which several application threads execute() at once, round after
// round. Under a shim that let TBB's worker soft limit fall to 0 this waited for ever
// (oneTBB's test_task_arena / test_task_group: tests/peer/RESULTS.md).
//   tbb_noslot ROUNDS THREADS
// stdout: "noslot checksum=<c>"; stderr: "min_parallelism <m>", the smallest
// global_control::active_value(max_allowed_parallelism) seen while running; exit 3 if the
// executions make no progress for 20 s.
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
    int rounds = argc > 1 ? std::atoi(argv[1]) : 200;
    int threads = argc > 2 ? std::atoi(argv[2]) : 3;
    tbb::task_arena arena(1, 0);  // concurrency 1, no slot reserved for application threads
    std::atomic<unsigned long long> sum{0};
    std::atomic<long> progress{0};
    std::atomic<bool> done{false};
    std::atomic<std::size_t> min_parallelism{~std::size_t{0}};
    std::thread watchdog([&] {
        long last = -1;
        auto since = std::chrono::steady_clock::now();
        while (!done.load()) {
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
            std::size_t m = tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism);
            if (m < min_parallelism.load()) min_parallelism.store(m);
            long p = progress.load();
            if (p != last) {
                last = p;
                since = std::chrono::steady_clock::now();
            } else if (std::chrono::steady_clock::now() - since > std::chrono::seconds(20)) {
                std::fprintf(stderr, "noslot: no progress for 20 s at %ld executions\n", p);
                std::_Exit(3);
            }
        }
    });
    std::vector<std::thread> app;
    for (int t = 0; t < threads; ++t)
        app.emplace_back([&, t] {
            for (int r = 0; r < rounds; ++r) {
                arena.execute([&] {
                    volatile unsigned long long x = 0;
                    for (int i = 0; i < 2000000; ++i) x = x + static_cast<unsigned long long>(i ^ (r + t));
                    sum.fetch_add(static_cast<unsigned long long>(r) * 31u + static_cast<unsigned long long>(t));
                });
                progress.fetch_add(1);
            }
        });
    for (auto& th : app) th.join();
    done.store(true);
    watchdog.join();
    std::printf("noslot checksum=%llu\n", sum.load());
    std::fprintf(stderr, "min_parallelism %zu\n", min_parallelism.load());
    return 0;
}
