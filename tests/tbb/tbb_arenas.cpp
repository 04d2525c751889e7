// Recursive tasks inside task_arena::execute, entered by a worker from one of its tasks: a
// parallel_for over ITERS iterations (one each), every iteration computing fib(N) on a task_group
// inside the calling thread's own arena of one slot, which no other thread can enter. A surplus
// worker that parks in a nested wait there leaves its children to nobody until it goes on.
//   tbb_arenas ITERS N CUTOFF        stdout: "sum <ITERS * fib(N)>"
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/partitioner.h>
#include <oneapi/tbb/task_arena.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "fib_task_group.hpp"

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: tbb_arenas ITERS N CUTOFF\n");
        return 2;
    }
    const long iters = std::atol(argv[1]), n = std::atol(argv[2]), cutoff = std::atol(argv[3]);
    // One arena per slot of the default arena: a thread enters only its own.
    const int slots = tbb::this_task_arena::max_concurrency();
    std::vector<std::unique_ptr<tbb::task_arena>> arenas;
    for (int i = 0; i < slots; ++i) arenas.push_back(std::make_unique<tbb::task_arena>(1));
    std::atomic<long> sum{0};
    tbb::parallel_for(
        tbb::blocked_range<long>(0, iters, 1),
        [&](const tbb::blocked_range<long>& r) {
            tbb::task_arena& own = *arenas[tbb::this_task_arena::current_thread_index()];
            for (long i = r.begin(); i != r.end(); ++i) own.execute([&] { sum += fib(n, cutoff); });
        },
        tbb::simple_partitioner());
    std::printf("sum %ld\n", sum.load());
    return 0;
}
