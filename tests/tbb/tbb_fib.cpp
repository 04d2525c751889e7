// Recursive Fibonacci on oneTBB task_group: every task waits for its children inside TBB (the
// nested waits in which a worker used to keep running stolen work at any allotment).
//   tbb_fib N CUTOFF REPS             stdout: "fib(N) = <value>"
//   tbb_fib N CUTOFF REPS LONG_MS     and then "long K": K of the REPS computations (rounds) that
//                                     lasted LONG_MS or more (a worker parked in a nested wait
//                                     that is over, while the main thread waits for its task)
#include <oneapi/tbb/task_group.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

static long fib_serial(long n) { return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2); }

static long fib(long n, long cutoff) {
    if (n <= cutoff) return fib_serial(n);
    long x = 0, y = 0;
    tbb::task_group g;
    g.run([&] { x = fib(n - 1, cutoff); });
    y = fib(n - 2, cutoff);
    g.wait();
    return x + y;
}

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
