// fib n [cutoff]: recursive Fibonacci, one OpenMP task per call above the cutoff.
#include "fib.hpp"
#include "omp_common.hpp"

static long fib(long n, long cutoff) {
    if (n < 2 || n <= cutoff) return fib_serial(n);
    long x = 0, y = 0;
#pragma omp task shared(x)
    x = fib(n - 1, cutoff);
    y = fib(n - 2, cutoff);
#pragma omp taskwait
    return x + y;
}

int main(int argc, char** argv) {
    wl::Args a = wl::parse("fib", argc, argv);
    wl::omp_limit(a);
    long n = wl::arg(a, 0, kFibN), cutoff = wl::arg(a, 1, 0);
    wl::Timer t;
    long r = 0;
    if (a.serial) {
        r = fib_serial(n);
    } else {
#pragma omp parallel
#pragma omp single
        r = fib(n, cutoff);
    }
    wl::report("fib", {n, cutoff}, static_cast<unsigned long long>(r), t.seconds());
}
