/* A real OpenMP program for the integration tests, built twice (clang -> libomp, gcc ->
 * libgomp): ROUNDS parallel regions, each a dynamic loop over ITEMS items of about ITEM_US
 * microseconds of busy work, optionally followed by SERIAL_MS of serial work. Nothing in it
 * knows about the shim.
 *   omp_rounds ROUNDS ITEMS ITEM_US [SERIAL_MS]
 * stdout: "omp_rounds ... checksum=<c> time_s=<t>"; stderr: "round <k> threads <team size> at <CLOCK_MONOTONIC s>" after each round's loop (the
 * time: when its serial phase starts, for bench/scripts/reaction.py --lend). */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "spin.h"

int main(int argc, char** argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: omp_rounds ROUNDS ITEMS ITEM_US [SERIAL_MS]\n");
        return 2;
    }
    int rounds = atoi(argv[1]), items = atoi(argv[2]), us = atoi(argv[3]), serial = argc > 4 ? atoi(argv[4]) : 0;
    uint64_t* out = calloc((size_t)items, sizeof *out);
    unsigned long long checksum = 0;
    double t0 = now();
    /* OMP_ROUNDS_WARMUP=N: N short regions first, so a long region starts with a grown team. */
    const char* w = getenv("OMP_ROUNDS_WARMUP");
    for (int r = 0, n = w ? atoi(w) : 0; r < n; ++r) {
#pragma omp parallel for schedule(dynamic, 1)
        for (int i = 0; i < 16; ++i) spin_us((uint64_t)i, 2000);
    }
    if (w) {
        fprintf(stderr, "warmup done\n");
        fflush(stderr);
    }
    for (int r = 0; r < rounds; ++r) {
        int team = 0;
#pragma omp parallel
        {
#pragma omp single nowait
            team = omp_get_num_threads();
#pragma omp for schedule(dynamic, 1)
            for (int i = 0; i < items; ++i) out[i] = spin_us((uint64_t)r * items + i, us);
        }
        for (int i = 0; i < items; ++i) checksum = checksum * 31 + out[i];
        fprintf(stderr, "round %d threads %d at %.6f\n", r, team, now());
        if (serial > 0) spin_us(0, serial * 1000);
    }
    printf("omp_rounds %d %d %d checksum=%llu time_s=%.3f\n", rounds, items, us, checksum, now() - t0);
    free(out);
    return 0;
}
