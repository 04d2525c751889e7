/* Teammates that spin on each other's flags with `#pragma omp flush`, as NPB LU's pipeline does:
 * after WARM_MS of parallel busy work (the shim has confined the job by then), two threads hand a
 * token back and forth ROUNDS times, each spinning on `turn` with a flush until it is its turn.
 *   omp_pipeline ROUNDS WARM_MS [BARRIER_EVERY]
 * BARRIER_EVERY > 0: both threads also meet at a barrier after every BARRIER_EVERY rounds (NPB LU's
 * sweeps end at barriers: the runtime calls the shim's confinement check counts as progress).
 * stdout: "pipeline rounds=<R> checksum=<c> spins_per_handoff=<s>" (checksum independent of
 * timing). On one CPU without yielding, every handoff costs the waiter a whole time slice of
 * spinning (hundreds of thousands of flushes); yielding, a handful. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "spin.h"

int main(int argc, char** argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 300;
    double warm_ms = argc > 2 ? atof(argv[2]) : 300;
    int barrier_every = argc > 3 ? atoi(argv[3]) : 0;
    volatile int turn = 0;
    long spins[2] = {0, 0};
    unsigned long sum = 0;
#pragma omp parallel num_threads(2) reduction(+ : sum)
    {
        sum += spin_us((unsigned)omp_get_thread_num() + 1, warm_ms * 1000);
#pragma omp barrier
        int me = omp_get_thread_num();
        if (me < 2) {
            long mine = 0;
            for (int r = 0; r < rounds; ++r) {
                mine += wait_turn(&turn, me);
                sum += (unsigned long)(r * 2 + me);
                pass_turn(&turn, me);
                if (barrier_every > 0 && (r + 1) % barrier_every == 0) {
#pragma omp barrier
                }
            }
            spins[me] = mine;
        }
    }
    printf("pipeline rounds=%d checksum=%lu spins_per_handoff=%.1f\n", rounds, sum,
           (double)(spins[0] + spins[1]) / (2.0 * rounds));
    return 0;
}
