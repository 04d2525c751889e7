// Uses oneTBB, finalizes it (blocking: TBB joins its workers), and starts again, ITER times, and
// reports the max_allowed_parallelism in force just before and just after each finalize, so a
// test can see that the shim gets out of finalize's way and throttles again afterwards.
//   tbb_refinalize ITER ROUNDS ITEMS ITEM_US
// stdout: "iter <k> ok=<0|1> active_before=<n> active_after=<m>" per iteration.
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace {

std::size_t active() {
    return tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 5) {
        std::fprintf(stderr, "usage: tbb_refinalize ITER ROUNDS ITEMS ITEM_US\n");
        return 2;
    }
    int iters = std::atoi(argv[1]), rounds = std::atoi(argv[2]), items = std::atoi(argv[3]), item_us = std::atoi(argv[4]);
    int failures = 0;
    for (int k = 0; k < iters; ++k) {
        tbb::task_scheduler_handle handle{tbb::attach{}};
        for (int r = 0; r < rounds; ++r)
            tbb::parallel_for(0, items, [item_us](int) {
                auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(item_us);
                while (std::chrono::steady_clock::now() < end) {
                }
            });
        std::size_t before = active();
        bool ok = tbb::finalize(handle, std::nothrow);
        std::printf("iter %d ok=%d active_before=%zu active_after=%zu\n", k, ok ? 1 : 0, before, active());
        std::fflush(stdout);
        failures += ok ? 0 : 1;
    }
    return failures == 0 ? 0 : 1;
}
