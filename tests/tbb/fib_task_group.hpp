// Recursive Fibonacci on oneTBB task_group, one task per call above the cutoff: every task waits
// for its children inside TBB (a nested wait). Shared by tests/tbb's fib programs.
#pragma once

#include <oneapi/tbb/task_group.h>

inline long fib_serial(long n) { return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2); }

inline long fib(long n, long cutoff) {
    if (n <= cutoff) return fib_serial(n);
    long x = 0, y = 0;
    tbb::task_group g;
    g.run([&] { x = fib(n - 1, cutoff); });
    y = fib(n - 2, cutoff);
    g.wait();
    return x + y;
}
