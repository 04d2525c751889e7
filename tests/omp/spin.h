/* Busy work for the OpenMP test programs (shared by every program in tests/omp). */
#ifndef APSHIM_TESTS_OMP_SPIN_H
#define APSHIM_TESTS_OMP_SPIN_H
#include <stdint.h>
#include <time.h>

static inline double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Spins for `us` microseconds of wall time. The result depends on the seed only, never on the
 * machine's speed or the team size, so checksums built from it are comparable across runs. */
static inline uint64_t spin_us(uint64_t seed, double us) {
    double end = now() + us / 1e6;
    volatile uint64_t x = seed | 1;
    while (now() < end)
        for (int k = 0; k < 64; ++k) x = x * 6364136223846793005ull + 1442695040888963407ull;
    return seed * 2654435761u % 1000003u;
}
#endif
