// Recursive Fibonacci on oneTBB task_group: every task waits for its children inside TBB (the
// nested waits in which a worker used to keep running stolen work at any allotment).
//   tbb_fib N CUTOFF REPS       stdout: "fib(N) = <value>"
#include <oneapi/tbb/task_group.h>

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
        std::fprintf(stderr, "usage: tbb_fib N CUTOFF REPS\n");
        return 2;
    }
    long n = std::atol(argv[1]), cutoff = std::atol(argv[2]), reps = std::atol(argv[3]), r = 0;
    for (long i = 0; i < reps; ++i) r = fib(n, cutoff);
    std::printf("fib(%ld) = %ld\n", n, r);
    return 0;
}
