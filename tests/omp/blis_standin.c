/* A stand-in for BLIS's OpenMP build (libblis4-openmp, bli_l3_thread_decorator): each call forks
 * num_threads(n), n = omp_get_max_threads(), and works in a team of n or of one; BLIS aborts the
 * program on any other size ("A different number of threads was created than was requested"),
 * which NumPy on BLIS did under the shim with OMP_NUM_THREADS=4 and OMP_DYNAMIC=true on 2 CPUs, and
 * does natively once libgomp's load-average rule gives it part of its team. Here the call says so
 * instead. Its file name starts with "libblis", as the shim's rule reads it
 * (adapters/omp/whole_team.hpp). Nothing in it knows the shim. */
#define _GNU_SOURCE
#include <omp.h>
#include <stdint.h>

#include "meetings.h"

/* Returns 1 when the team was whole or one, 0 otherwise (BLIS would have aborted); *team: its size. */
int standin_blis_call(int* team) {
    int n = omp_get_max_threads(), fine = 1;
#pragma omp parallel num_threads(n)
    {
        int real = omp_get_num_threads();
        if (omp_get_thread_num() == 0) *team = real;
        if (real != n && real != 1) {
#pragma omp atomic write
            fine = 0;
        }
        (void)spin_us((uint64_t)omp_get_thread_num(), 50);
    }
    return fine;
}

/* BLIS's meetings: a call forks num_threads(n), n = omp_get_max_threads(), whose threads meet
 * `meetings` times without a yield (meetings.h). Returns the checksum; *widest: the most CPUs a
 * thread of the team could run on at its last meeting. */
uint64_t standin_blis_meetings(int meetings, long iters, int* widest) {
    int n = omp_get_max_threads(), arrived = 0, sense = 0, most = 0;
    uint64_t sum = 0;
#pragma omp parallel num_threads(n) reduction(+ : sum)
    sum += meet(meetings, iters, &arrived, &sense, &most);
    *widest = most;
    return sum;
}
