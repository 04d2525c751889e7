// A program that binds itself before its first TBB call, as oneTBB's test_hw_concurrency does.
//   tbb_bound bind   sched_setaffinity(0, {first CPU of its mask}), then asks
//   tbb_bound free   asks without binding
//   tbb_bound late   runs TBB work for 300 ms first (a throttled job is confined by then), then
//                    binds and asks at once
// stdout: "tbb <max_concurrency> mask <CPUs in sched_getaffinity>".
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>
#include <sched.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

int main(int argc, char** argv) {
    if (argc != 2) return 2;
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 3;
    const bool late = std::strcmp(argv[1], "late") == 0;
    if (late) {
        auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
        tbb::parallel_for(0, 64, [&](int) {
            while (std::chrono::steady_clock::now() < end) std::this_thread::yield();
        });
    }
    if (late || std::strcmp(argv[1], "bind") == 0) {
        int first = 0;
        while (!CPU_ISSET(first, &set)) ++first;
        CPU_ZERO(&set);
        CPU_SET(first, &set);
        if (sched_setaffinity(0, sizeof set, &set) != 0) return 4;
    }
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 3;
    std::printf("tbb %d mask %d\n", tbb::this_task_arena::max_concurrency(), CPU_COUNT(&set));
    return 0;
}
