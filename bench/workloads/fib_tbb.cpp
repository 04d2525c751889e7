// fib n [cutoff]: recursive Fibonacci, one task per call above the cutoff (oneTBB task_group).
#include <oneapi/tbb/task_group.h>

#include "fib.hpp"
#include "tbb_common.hpp"

static long fib(long n, long cutoff) {
    if (n < 2 || n <= cutoff) return fib_serial(n);
    long x = 0, y = 0;
    tbb::task_group g;
    g.run([&] { x = fib(n - 1, cutoff); });
    y = fib(n - 2, cutoff);
    g.wait();
    return x + y;
}

int main(int argc, char** argv) {
    wl::Args a = wl::parse("fib", argc, argv);
    auto limit = wl::tbb_limit(a);
    long n = wl::arg(a, 0, kFibN), cutoff = wl::arg(a, 1, 0);
    wl::Timer t;
    long r = a.serial ? fib_serial(n) : fib(n, cutoff);
    wl::report("fib", {n, cutoff}, static_cast<unsigned long long>(r), t.seconds());
}
