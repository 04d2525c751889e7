// fib n [cutoff]: recursive Fibonacci with one task per call above the cutoff (oneTBB task_group).
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_group.h>

#include <memory>

#include "common.hpp"

static long fib_serial(long n) { return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2); }

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
    wl::Args a = wl::parse(argc, argv);
    std::unique_ptr<tbb::global_control> limit;
    if (a.threads > 0) limit = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism, a.threads);
    wl::Timer t;
    long r = fib(wl::arg(a, 0, 30), wl::arg(a, 1, 0));
    wl::report("fib", a, static_cast<unsigned long long>(r), t.seconds());
}
