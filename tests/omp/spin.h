/* Busy work for the OpenMP test programs (shared by every program in tests/omp). */
#ifndef APSHIM_TESTS_OMP_SPIN_H
#define APSHIM_TESTS_OMP_SPIN_H
#include <sched.h>
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

/* Fixed work: the same instructions whatever the machine or the team, `iters` steps of it. The
 * shift makes the step no affine map, so no compiler folds the loop (clang -O2 ran 20 000 steps
 * of the map alone in 3 us, gcc in 26 us). */
static inline uint64_t work(uint64_t seed, long iters) {
    uint64_t x = seed | 1;
    for (long i = 0; i < iters; ++i) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        x ^= x >> 29;
    }
    return x >> 33;
}

/* A token two threads hand back and forth by spinning on a flushed flag in the program's own code,
 * as NPB LU's pipeline does (no runtime call but the flush: a fence with gcc, __kmpc_flush with
 * clang). wait_turn spins until `*turn` is `me` and returns the spins; pass_turn hands it on. */
static inline long wait_turn(volatile int* turn, int me) {
    long spins = 0;
    while (*turn != me) {
        ++spins;
#pragma omp flush
    }
    return spins;
}

static inline void pass_turn(volatile int* turn, int me) {
    *turn = 1 - me;
#pragma omp flush
}

/* OpenBLAS's wait (exec_blas): each piece of a call yields until all `n` have arrived (`*arrived`,
 * counted atomically by the pieces). Returns 1 when they did, 0 once `limit_s` seconds passed. */
static inline int wait_for_pieces(volatile int* arrived, int n, double limit_s) {
    double start = now();
    while (__atomic_load_n(arrived, __ATOMIC_ACQUIRE) < n) {
        if (now() - start > limit_s) return 0;
        sched_yield();
    }
    return 1;
}
#endif
