// fib: shared by fib_tbb.cpp and fib_omp.cpp.
// T1 ~ 2 fib(n+1) - 1 calls of a few ns each, plus one task per call with n > max(cutoff, 1);
// T_inf ~ n - cutoff task levels plus fib(cutoff) serial work.
#pragma once

inline constexpr long kFibN = 33;  // default n (no cutoff): fib(n+1) - 1 ~ 5.7 M tasks

inline long fib_serial(long n) { return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2); }
