// A program that says how many threads it needs: it sets max_allowed_parallelism to N (argv[1],
// default 4) with its own global_control, then runs N tasks that wait for each other (a barrier
// of spinning tasks, as oneTBB's own test_arena_priorities and test_task_arena do). Capping it
// below N deadlocks it, so the shim must step aside, whether N is above TBB's default or not.
// With a second argument "nocontrol" it sets no global_control and relies on TBB's default
// concurrency alone (as oneTBB's test_task_arena does): the shim's stall valve must let it on.
// With "replace" it then drops its control, waits 100 ms and prints "before <TBB's limit before
// its first control> active <TBB's limit now>".
// Prints "all N met".
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string_view>
#include <thread>

int main(int argc, char** argv) {
    const int kThreads = argc > 1 ? std::atoi(argv[1]) : 4;
    if (kThreads < 1) return 2;
    const bool own_control = !(argc > 2 && std::string_view(argv[2]) == "nocontrol");
    const bool replace = argc > 2 && std::string_view(argv[2]) == "replace";
    // TBB's limit before the program set any (its default concurrency, or the shim's cap).
    const std::size_t before = tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism);
    std::optional<tbb::global_control> control;
    if (own_control) control.emplace(tbb::global_control::max_allowed_parallelism, kThreads);
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
    if (replace) {
        // The program's control is gone; a program that then creates its next one must not find
        // the shim's (lower, or in between larger) cap back: print what TBB applies now.
        control.reset();
        std::this_thread::sleep_for(std::chrono::milliseconds(100));  // many controller cycles
        std::printf("before %zu active %zu\n", before,
                    tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism));
    }
    return 0;
}
