/* Waits inside constructs that are not barriers by name: while one thread of the team computes,
 * its teammates wait. Nothing in it knows about the shim.
 *   omp_waits ROUNDS STEPS   (40 4000000: about 0.4 s whatever the team)
 * Each round, in one region of the team:
 *  - a `single copyprivate(x)` whose thread computes x (gcc: GOMP_single_copy_start, where the
 *    teammates wait for x, and GOMP_single_copy_end; clang: __kmpc_copyprivate's barriers);
 *  - a `for reduction(task, +)` loop whose first iteration makes one task (in_reduction) that
 *    computes, while the loop's end waits for it (gcc: GOMP_workshare_task_reduction_unregister,
 *    a taskgroup's end and a barrier).
 * Each computation is STEPS steps of spin.h's work(). stdout: "waits rounds=<R> checksum=<c>"
 * (independent of the team size). */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "spin.h"

int main(int argc, char** argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 40;
    long steps = argc > 2 ? atol(argv[2]) : 4000000;
    uint64_t sum = 0;
    for (int r = 0; r < rounds; ++r) {
        uint64_t seen = 0, d = 0;
#pragma omp parallel shared(seen, d)
        {
            uint64_t x;
#pragma omp single copyprivate(x)
            x = work(2 * (uint64_t)r, steps);
            if (omp_get_thread_num() == 0) seen = x;  /* the copy, on a thread that may not have made it */
#pragma omp for schedule(static) reduction(task, + : d)
            for (int i = 0; i < 2 * omp_get_num_threads(); ++i) {
                if (i == 0) {
#pragma omp task in_reduction(+ : d)
                    d += work(2 * (uint64_t)r + 1, steps);
                }
            }
        }
        sum += seen ^ (d << 1);
    }
    printf("waits rounds=%d checksum=%llu\n", rounds, (unsigned long long)sum);
    return 0;
}
