/* Taskloops: a `single` thread splits a loop into tasks that the whole team runs. Nothing in it
 * knows about the shim.
 *   omp_taskloop ROUNDS N [STEPS]   (100 2000 200: about 0.4 s on one thread)
 * Each round: a region whose `single` runs a taskloop over N items with nothing after it, so that
 * its teammates run the tasks at the region's end barrier; then a region whose `single` runs a
 * taskloop with an unsigned long long index and a reduction, and a `nogroup` taskloop followed by a
 * taskwait. Every taskloop makes TASKS tasks (below), each of N/TASKS items; an item does STEPS steps
 * of spin.h's work(). stdout: "taskloop rounds=<R> n=<N> tasks=<taskloop tasks made> checksum=<c>"
 * (independent of the team size). */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "spin.h"

#if defined(__clang__)
/* clang 14 warns of its own lowering of a taskloop over a signed index ("comparison of integers of
 * different signs: 'unsigned long' and 'long'" at `i < n`). */
#pragma clang diagnostic ignored "-Wsign-compare"
#endif

enum { TASKS = 16 };  /* per taskloop: deferred at any team size (libgomp runs them at once above 64 a thread) */

int main(int argc, char** argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 100;
    long n = argc > 2 ? atol(argv[2]) : 2000;
    long steps = argc > 3 ? atol(argv[3]) : 200;
    uint64_t* out = calloc((size_t)n, sizeof *out);
    if (!out) return 1;
    uint64_t sum = 0;
    for (int r = 0; r < rounds; ++r) {
#pragma omp parallel
#pragma omp single
#pragma omp taskloop num_tasks(TASKS)
        for (long i = 0; i < n; ++i) out[i] = work((uint64_t)(r * n + i), steps);
        uint64_t a = 0, b = 0, c = 0;
        for (long i = 0; i < n; ++i) a += out[i] * (uint64_t)(i + 1);
#pragma omp parallel
#pragma omp single
        {
#pragma omp taskloop num_tasks(TASKS) reduction(+ : b)
            for (unsigned long long i = 0; i < (unsigned long long)n; ++i) b += work(3 * (uint64_t)(r * n) + i, steps);
#pragma omp taskloop num_tasks(TASKS) nogroup
            for (long i = 0; i < n; ++i) out[i] = work(7 * (uint64_t)(r * n) + (uint64_t)i, steps);
#pragma omp taskwait
        }
        for (long i = 0; i < n; ++i) c += out[i] * (uint64_t)(i + 1);
        sum += a ^ (b << 1) ^ (c << 2);
    }
    free(out);
    printf("taskloop rounds=%d n=%ld tasks=%d checksum=%llu\n", rounds, n, 3 * TASKS * rounds, (unsigned long long)sum);
    return 0;
}
