/* NPB LU's shape in small, in one parallel region: each iteration a pipelined sweep, then
 * computing loops. The sweep hands a token back and forth ROUNDS times between two threads that
 * spin on a flushed flag in the program's own code, each doing WORK steps of busy work per turn:
 * no runtime call, so it makes no progress marks (shim/confine_check.hpp). The loops (LOOPS static
 * `omp for` loops of two WORK-step chunks) make the marks, by their barriers. Busy work is counted
 * in steps, not timed, so that it costs the same CPU wherever it runs.
 *   omp_sweeps ITERATIONS [ROUNDS] [LOOPS] [WORK]
 * stdout: "sweeps iterations=<I> checksum=<c> spins_per_handoff=<s>" (checksum independent of
 * timing and of the team's size: one thread takes both turns). The waiter spins while the other
 * thread works its turn, and confined to one CPU (gcc: `omp flush` is a fence, no call a hook
 * sees) until the kernel takes the CPU from it, a time slice: tens of times as many spins. */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t work(uint64_t seed, long steps) {
    uint64_t x = seed | 1;
    for (long k = 0; k < steps; ++k) x = x * 6364136223846793005ull + 1442695040888963407ull;
    return x >> 40;
}

int main(int argc, char** argv) {
    int iterations = argc > 1 ? atoi(argv[1]) : 300;
    int rounds = argc > 2 ? atoi(argv[2]) : 30;
    int loops = argc > 3 ? atoi(argv[3]) : 17;
    long steps = argc > 4 ? atol(argv[4]) : 30000;
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
                while (turn != me) {
                    ++mine;
#pragma omp flush
                }
                sum += work((uint64_t)it * 1000003u + (uint64_t)r * 2 + (uint64_t)me, steps);
                turn = 1 - me;
#pragma omp flush
            }
            for (int l = 0; l < loops; ++l) {
#pragma omp for schedule(static)
                for (int i = 0; i < 2; ++i) sum += work((uint64_t)it * 7919u + (uint64_t)l * 2 + (uint64_t)i, steps);
            }
        }
        if (me < 2) spins[me] = mine;
    }
    printf("sweeps iterations=%d checksum=%lu spins_per_handoff=%.1f\n", iterations, sum,
           (double)(spins[0] + spins[1]) / (2.0 * iterations * rounds));
    return 0;
}
