// fib n [cutoff]: recursive Fibonacci with one OpenMP task per call above the cutoff.
#include <omp.h>

#include "common.hpp"

static long fib_serial(long n) { return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2); }

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
    wl::Args a = wl::parse(argc, argv);
    if (a.threads > 0) omp_set_num_threads(a.threads);
    wl::Timer t;
    long r = 0;
#pragma omp parallel
#pragma omp single
    r = fib(wl::arg(a, 0, 30), wl::arg(a, 1, 0));
    wl::report("fib", a, static_cast<unsigned long long>(r), t.seconds());
}
