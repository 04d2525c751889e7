/* OpenMP workload shapes for the integration tests, built with clang (libomp) and gcc (libgomp).
 * Nothing in it knows about the shim.
 *   omp_kinds fib N CUTOFF REPS [LEAF_US]
 *                                   fib(N) with omp task above CUTOFF, REPS times (one region
 *                                   each); LEAF_US > 0: each leaf also spins LEAF_US of wall
 *                                   time (parallel even on a loaded machine)
 *   omp_kinds imbalanced ROUNDS N   dynamic,1 loop over N items, item i costs (i % 8 + 1) x 250 us
 *   omp_kinds static ROUNDS US      ROUNDS short regions, each a static loop of 64 items of US us
 *   omp_kinds loopy ROUNDS N MS     LOOPY: one loop spawning N equal tasks of MS ms (single + task)
 * Optional env OMP_KINDS_SERIAL_MS: serial work after each round/rep.
 * stdout: "<kind> result=<r> time_s=<t>" (result independent of the team size);
 * stderr: "round <k> threads <team size>" per region. */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "spin.h"

static long fib_seq(int n) { return n < 2 ? n : fib_seq(n - 1) + fib_seq(n - 2); }

static int leaf_us;

static long fib(int n, int cutoff) {
    if (n <= cutoff) {
        if (leaf_us > 0) spin_us((uint64_t)n, leaf_us);
        return fib_seq(n);
    }
    long a, b;
#pragma omp task shared(a) firstprivate(n, cutoff)
    a = fib(n - 1, cutoff);
#pragma omp task shared(b) firstprivate(n, cutoff)
    b = fib(n - 2, cutoff);
#pragma omp taskwait
    return a + b;
}

static void serial_phase(void) {
    const char* s = getenv("OMP_KINDS_SERIAL_MS");
    if (s && atoi(s) > 0) spin_us(7, atoi(s) * 1000.0);
}

int main(int argc, char** argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: omp_kinds fib|imbalanced|static|loopy ...\n");
        return 2;
    }
    const char* kind = argv[1];
    int a1 = atoi(argv[2]), a2 = atoi(argv[3]), a3 = argc > 4 ? atoi(argv[4]) : 0;
    unsigned long long result = 0;
    double t0 = now();
    if (!strcmp(kind, "fib")) {
        leaf_us = argc > 5 ? atoi(argv[5]) : 0;
        for (int rep = 0; rep < a3; ++rep) {
            long f = 0;
            int team = 0;
#pragma omp parallel shared(f, team)
#pragma omp single
            {
                team = omp_get_num_threads();
                f = fib(a1, a2);
            }
            result = result * 31 + (unsigned long long)f;
            fprintf(stderr, "round %d threads %d\n", rep, team);
            serial_phase();
        }
    } else if (!strcmp(kind, "imbalanced")) {
        for (int r = 0; r < a1; ++r) {
            unsigned long long sum = 0;
            int team = 0;
#pragma omp parallel reduction(+ : sum)
            {
#pragma omp single nowait
                team = omp_get_num_threads();
#pragma omp for schedule(dynamic, 1)
                for (int i = 0; i < a2; ++i) sum += spin_us((uint64_t)(r * a2 + i), (i % 8 + 1) * 250.0);
            }
            result = result * 31 + sum;
            fprintf(stderr, "round %d threads %d\n", r, team);
            serial_phase();
        }
    } else if (!strcmp(kind, "static")) {
        for (int r = 0; r < a1; ++r) {
            unsigned long long sum = 0;
            int team = 0;
#pragma omp parallel for schedule(static) reduction(+ : sum)
            for (int i = 0; i < 64; ++i) {
                if (i == 0) team = omp_get_num_threads();
                sum += spin_us((uint64_t)(r * 64 + i), a2);
            }
            result = result * 31 + sum;
            fprintf(stderr, "round %d threads %d\n", r, team);
            serial_phase();
        }
    } else if (!strcmp(kind, "loopy")) {
        for (int r = 0; r < a1; ++r) {
            unsigned long long sum = 0;
            int team = 0;
#pragma omp parallel shared(sum, team)
#pragma omp single
            {
                team = omp_get_num_threads();
                for (int i = 0; i < a2; ++i) {
#pragma omp task firstprivate(i)
                    {
                        uint64_t v = spin_us((uint64_t)(r * a2 + i), a3 * 1000.0);
#pragma omp atomic
                        sum += v;
                    }
                }
            }
            result = result * 31 + sum;
            fprintf(stderr, "round %d threads %d\n", r, team);
            serial_phase();
        }
    } else {
        fprintf(stderr, "unknown kind %s\n", kind);
        return 2;
    }
    printf("%s result=%llu time_s=%.3f\n", kind, result, now() - t0);
    return 0;
}
