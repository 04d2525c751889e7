/* NPB LU's shape in small, in one parallel region: each iteration a pipelined sweep, then
 * computing loops. The sweep hands a token back and forth ROUNDS times between two threads that
 * spin on a flushed flag in the program's own code, each doing WORK steps of busy work per turn:
 * no runtime call, so it makes no progress marks (shim/confine_check.hpp). The loops (LOOPS static
 * `omp for` loops of two WORK-step chunks) make the marks, by their barriers. Busy work is counted
 * in steps (spin.h's work(): 13 500 take 26 us here), not timed, so that it costs the same CPU
 * wherever it runs.
 *   omp_sweeps [ITERATIONS [ROUNDS [LOOPS [WORK]]]]   (150 200 34 13500: 1.7 s natively)
 * stdout: "sweeps iterations=<I> checksum=<c> spins_per_handoff=<s>" (checksum independent of
 * timing and of the team's size: one thread takes both turns). The waiter spins while the other
 * thread works its turn, and confined to one CPU (gcc: `omp flush` is a fence, no call a hook
 * sees) until the kernel takes the CPU from it, a time slice: tens of times as many spins. */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "spin.h"

int main(int argc, char** argv) {
    int iterations = argc > 1 ? atoi(argv[1]) : 150;
    int rounds = argc > 2 ? atoi(argv[2]) : 200;
    int loops = argc > 3 ? atoi(argv[3]) : 34;
    long steps = argc > 4 ? atol(argv[4]) : 13500;
    volatile int turn = 0;
    long spins[2] = {0, 0};
    unsigned long sum = 0;
#pragma omp parallel num_threads(2) reduction(+ : sum)
    {
        int me = omp_get_thread_num(), two = omp_get_num_threads() == 2;
        long mine = 0;
        for (int it = 0; it < iterations; ++it) {
            for (int r = 0; r < rounds; ++r) {
                if (!two) {  /* one thread: both turns in order */
                    sum += work((uint64_t)it * 1000003u + (uint64_t)r * 2, steps);
                    sum += work((uint64_t)it * 1000003u + (uint64_t)r * 2 + 1, steps);
                    continue;
                }
                mine += wait_turn(&turn, me);
                sum += work((uint64_t)it * 1000003u + (uint64_t)r * 2 + (uint64_t)me, steps);
                pass_turn(&turn, me);
            }
            for (int l = 0; l < loops; ++l) {
#pragma omp for schedule(static)
                for (int i = 0; i < 2; ++i) sum += work((uint64_t)it * 7919u + (uint64_t)l * 2 + (uint64_t)i, steps);
            }
        }
        spins[me] = mine;  /* me < 2: num_threads(2) */
    }
    printf("sweeps iterations=%d checksum=%lu spins_per_handoff=%.1f\n", iterations, sum,
           (double)(spins[0] + spins[1]) / (2.0 * iterations * rounds));
    return 0;
}
