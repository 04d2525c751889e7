// Tasks that meet at a std::barrier: each round, a parallel_for over as many parts as TBB's
// default concurrency (its threads), each part computing about a millisecond and then waiting at
// a std::barrier for every other part (NPB-PSTL IS's shape: TBB promises no concurrency, but the
// default arena has a slot for every part). A part waits without running other tasks and without
// using its CPU. Prints "rounds R long K": K rounds that lasted 100 ms or more (a round computes
// a few ms), which a thread parked with a part still queued behind the waiting ones costs.
//   tbb_barrier [ROUNDS [ITERATIONS]]   (ITERATIONS of a part's loop, 300000 by default: about 1 ms)
#include <oneapi/tbb/info.h>
#include <oneapi/tbb/parallel_for.h>

#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace {

volatile double g_sink;

void compute(int iterations) {
    double x = 0;
    for (int i = 0; i < iterations; ++i) x += i * 1e-9;
    g_sink = x;
}

}  // namespace

int main(int argc, char** argv) {
    const int rounds = argc > 1 ? std::atoi(argv[1]) : 20;
    const int iterations = argc > 2 ? std::atoi(argv[2]) : 300000;
    const int parts = tbb::info::default_concurrency();
    int long_waits = 0;
    for (int r = 0; r < rounds; ++r) {
        std::barrier meet(parts);
        const auto t0 = std::chrono::steady_clock::now();
        tbb::parallel_for(0, parts, 1, [&](int) {
            compute(iterations);
            meet.arrive_and_wait();
        });
        if (std::chrono::steady_clock::now() - t0 >= std::chrono::milliseconds(100)) ++long_waits;
    }
    std::printf("rounds %d long %d\n", rounds, long_waits);
    return 0;
}
