/* Waits inside constructs that are not barriers by name: while one thread of the team computes,
 * its teammates wait. Nothing in it knows about the shim.
 *   omp_waits KIND [ROUNDS [STEPS]]   (40 4000000: about 0.4 s whatever the team)
 * Each round is one region of the team, whose one construct of KIND is:
 *  - copy: a `single copyprivate(x)` whose thread computes x (gcc: GOMP_single_copy_start, where
 *    the teammates wait for x, and GOMP_single_copy_end; clang: __kmpc_copyprivate's barriers);
 *  - taskred: a `for reduction(task, +)` loop whose first iteration makes one task (in_reduction)
 *    that computes, while the loop's end waits for it (gcc:
 *    GOMP_workshare_task_reduction_unregister, a taskgroup's end and a barrier);
 *  - critical: a critical section in which each thread computes, one after the other, named in
 *    even rounds and unnamed in odd ones (gcc: GOMP_critical_name_start, GOMP_critical_start;
 *    clang: __kmpc_critical), after a barrier, so that the whole team
 *    is there when the first one enters it (a worker woken late would otherwise wait less);
 *  - ordered: an ordered loop of one iteration a thread whose ordered part computes, each thread
 *    waiting for its turn (gcc: GOMP_ordered_start; clang: __kmpc_ordered), after a barrier too;
 *  - atomic: a loop of 1000 iterations, each computing a part and adding it to a long double with
 *    `omp atomic`, which no instruction does (gcc: GOMP_atomic_start and _end, libgomp's one lock
 *    for such atomics). clang would call libatomic for it, outside libomp: its build adds to a
 *    double (a compare-and-swap loop). Its waits are short: the part is computed before the lock.
 * A computation is STEPS steps of spin.h's work(), STEPS/2 a thread for critical and ordered,
 * STEPS/1000 an iteration for atomic.
 * stdout: "waits KIND rounds=<R> checksum=<c>" (independent of the team size). */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spin.h"

#ifdef __clang__
typedef double sum_t;
#else
typedef long double sum_t;  /* wider than any atomic instruction: libgomp's lock */
#endif

int main(int argc, char** argv) {
    const char* kind = argc > 1 ? argv[1] : "copy";
    int rounds = argc > 2 ? atoi(argv[2]) : 40;
    long steps = argc > 3 ? atol(argv[3]) : 4000000;
    int k = !strcmp(kind, "copy") ? 0 : !strcmp(kind, "taskred") ? 1 : !strcmp(kind, "critical") ? 2
          : !strcmp(kind, "ordered") ? 3 : !strcmp(kind, "atomic") ? 4 : -1;
    if (k < 0) {
        fprintf(stderr, "omp_waits: KIND is copy, taskred, critical, ordered or atomic\n");
        return 2;
    }
    uint64_t sum = 0;
    for (int r = 0; r < rounds; ++r) {
        uint64_t v = 0;  /* the round's value: the same whoever computes it, and however often */
        uint64_t d = 0;
        sum_t a = 0;  /* atomic: a sum of integers below 2^53, exact whatever the order */
#pragma omp parallel shared(v, d, a)
        {
            if (k == 0) {
                uint64_t x;
#pragma omp single copyprivate(x)
                x = work((uint64_t)r, steps);
                if (omp_get_thread_num() == 0) v = x;  /* the copy, on a thread that may not have made it */
            } else if (k == 1) {
#pragma omp for schedule(static) reduction(task, + : d)
                for (int i = 0; i < 2 * omp_get_num_threads(); ++i) {
                    if (i == 0) {
#pragma omp task in_reduction(+ : d)
                        d += work((uint64_t)r, steps);
                    }
                }
            } else if (k == 2) {
#pragma omp barrier
                if (r % 2) {
#pragma omp critical
                    v = work((uint64_t)r, steps / 2);
                } else {
#pragma omp critical(waits_turns)
                    v = work((uint64_t)r, steps / 2);
                }
            } else if (k == 3) {
#pragma omp barrier
#pragma omp for ordered schedule(static, 1)
                for (int i = 0; i < omp_get_num_threads(); ++i) {
#pragma omp ordered
                    v = work((uint64_t)r, steps / 2);
                }
            } else {
#pragma omp for schedule(static)
                for (int i = 0; i < 1000; ++i) {
                    uint64_t part = work((uint64_t)r * 1000 + (uint64_t)i, steps / 1000) % 1000003u;
#pragma omp atomic
                    a += (sum_t)part;
                }
            }
        }
        sum += v + d + (uint64_t)a;
    }
    printf("waits %s rounds=%d checksum=%llu\n", kind, rounds, (unsigned long long)sum);
    return 0;
}
