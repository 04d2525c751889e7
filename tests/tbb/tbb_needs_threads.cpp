// A program that needs more threads than cores and says so: it raises max_allowed_parallelism
// to 4 with its own global_control, then runs 4 tasks that wait for each other (a barrier of
// spinning tasks, as oneTBB's own test_arena_priorities does). Capping it below 4 deadlocks it,
// so the shim must step aside. Prints "all 4 met".
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

int main() {
    constexpr int kThreads = 4;
    tbb::global_control control(tbb::global_control::max_allowed_parallelism, kThreads);
    tbb::task_arena arena(kThreads);  // an explicit arena: the default one has one slot per core
    std::atomic<int> arrived{0};
    arena.execute([&] {
        tbb::task_group g;
        for (int i = 0; i < kThreads; ++i)
            g.run([&] {
                arrived.fetch_add(1);
                while (arrived.load() < kThreads) std::this_thread::sleep_for(std::chrono::microseconds(100));
            });
        g.wait();
    });
    std::printf("all %d met\n", arrived.load());
    return 0;
}
