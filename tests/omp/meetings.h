/* BLIS's meetings (bli_thrcomm_barrier_atomic), for tests/omp's BLIS stand-in and the program that
 * calls it: a team's threads meet in a sense-reversing barrier that spins without a yield. Define
 * _GNU_SOURCE before any include. */
#ifndef APSHIM_TESTS_OMP_MEETINGS_H
#define APSHIM_TESTS_OMP_MEETINGS_H
#include <omp.h>
#include <sched.h>
#include <stdint.h>

#include "kernel_mask.h"
#include "spin.h"

/* On each of `parties` threads that meet, `index` this one's: `iters` steps of fixed work shared by
 * them, then a meeting, `meetings` times (`arrived`, `sense`: the meeting's, 0 at its start).
 * Returns the thread's checksum (their sum is the same at any count of parties) and raises
 * *widest to the CPUs the thread could run on at its last meeting. */
static inline uint64_t meet_as(int index, int parties, int meetings, long iters, int* arrived, int* sense,
                               int* widest) {
    int mine = 0;
    uint64_t sum = 0;
    for (int m = 0; m < meetings; ++m) {
        for (int part = index; part < 8; part += parties) sum += work((uint64_t)(m * 8 + part), iters / 8);
        mine = !mine;
        if (__atomic_add_fetch(arrived, 1, __ATOMIC_ACQ_REL) == parties) {
            __atomic_store_n(arrived, 0, __ATOMIC_RELAXED);
            __atomic_store_n(sense, mine, __ATOMIC_RELEASE);
        } else {
            while (__atomic_load_n(sense, __ATOMIC_ACQUIRE) != mine) {
            }
        }
    }
    int cpus = kernel_mask_cpus(), seen = __atomic_load_n(widest, __ATOMIC_RELAXED);
    while (cpus > seen && !__atomic_compare_exchange_n(widest, &seen, cpus, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
    return sum;
}

/* The Eigen stand-in's function (eigen_standin.c), under the name of an instantiation of Eigen's
 * parallelize_gemm<true, Functor, long>, as its callers declare it too. */
#define EIGEN_GEMM_STANDIN_SYMBOL __asm__("_ZN5Eigen8internal16parallelize_gemmILb1EN6apshim7standinElEEvRKT0_T1_S6_S6_b")

/* Inside a parallel region, on every thread of its team: meet_as() with the whole team. */
static inline uint64_t meet(int meetings, long iters, int* arrived, int* sense, int* widest) {
    return meet_as(omp_get_thread_num(), omp_get_num_threads(), meetings, iters, arrived, sense, widest);
}
#endif
