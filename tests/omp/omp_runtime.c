/* Loops whose schedule the runtime resolves: `schedule(runtime)` (OMP_SCHEDULE), with a long and
 * an unsigned long long index, in one parallel region and as combined `parallel for` regions; and
 * loops with a task reduction (gcc: GOMP_loop_start). Nothing in it knows about the shim.
 *   omp_runtime ROUNDS N [STEPS]   (100 2000 200: about 0.5 s on one thread)
 * Each round: an `omp for schedule(runtime)` loop over N items, the same with an unsigned long long
 * index, a combined `parallel for schedule(runtime)` region over N items, and a
 * `for reduction(task, +)` loop whose N/8 items each make a task. An item does STEPS steps of
 * spin.h's work(). stdout: "runtime rounds=<R> n=<N> checksum=<c>" (independent of the team size
 * and the schedule). */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "spin.h"

int main(int argc, char** argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 100;
    long n = argc > 2 ? atol(argv[2]) : 2000;
    long steps = argc > 3 ? atol(argv[3]) : 200;
    uint64_t sum = 0;
    for (int r = 0; r < rounds; ++r) {
        uint64_t a = 0, b = 0, c = 0, d = 0;
#pragma omp parallel reduction(+ : a, b)
        {
#pragma omp for schedule(runtime)
            for (long i = 0; i < n; ++i) a += work((uint64_t)(r * n + i), steps);
#pragma omp for schedule(runtime) nowait
            for (unsigned long long i = 0; i < (unsigned long long)n; ++i) b += work(3 * (uint64_t)(r * n) + i, steps);
        }
#pragma omp parallel for schedule(runtime) reduction(+ : c)
        for (long i = 0; i < n; ++i) c += work(7 * (uint64_t)(r * n) + i, steps);
#pragma omp parallel
        {
#pragma omp for schedule(dynamic) reduction(task, + : d)
            for (long i = 0; i < n / 8; ++i) {
#pragma omp task in_reduction(+ : d) firstprivate(i)
                d += work(11 * (uint64_t)(r * n) + i, 8 * steps);
            }
        }
        sum += a ^ (b << 1) ^ (c << 2) ^ (d << 3);
    }
    printf("runtime rounds=%d n=%ld checksum=%llu\n", rounds, n, (unsigned long long)sum);
    return 0;
}
