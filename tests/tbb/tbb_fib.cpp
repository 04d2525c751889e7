// Recursive Fibonacci on oneTBB task_group: every task waits for its children inside TBB (the
// nested waits in which a worker used to keep running stolen work at any allotment).
//   tbb_fib N CUTOFF REPS             stdout: "fib(N) = <value>"
//   tbb_fib N CUTOFF REPS LONG_MS     and then "long K": K of the REPS computations (rounds) that
//                                     lasted LONG_MS or more (a worker parked in a nested wait
//                                     that is over, while the main thread waits for its task)
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "fib_task_group.hpp"

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: tbb_fib N CUTOFF REPS [LONG_MS]\n");
        return 2;
    }
    long n = std::atol(argv[1]), cutoff = std::atol(argv[2]), reps = std::atol(argv[3]), r = 0;
    const bool timed = argc > 4;
    const auto long_round = std::chrono::milliseconds(timed ? std::atol(argv[4]) : 0);
    long long_rounds = 0;
    for (long i = 0; i < reps; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        r = fib(n, cutoff);
        if (timed && std::chrono::steady_clock::now() - t0 >= long_round) ++long_rounds;
    }
    std::printf("fib(%ld) = %ld\n", n, r);
    if (timed) std::printf("long %ld\n", long_rounds);
    return 0;
}
