/* A stand-in for BLIS's OpenMP build (libblis4-openmp, bli_l3_thread_decorator): each call forks
 * num_threads(n), n = omp_get_max_threads(), and works in a team of n or of one; BLIS aborts the
 * program on any other size ("A different number of threads was created than was requested"),
 * which NumPy on BLIS did under the shim with OMP_NUM_THREADS=4 and OMP_DYNAMIC=true on 2 CPUs, and
 * does natively once libgomp's load-average rule gives it part of its team. Here the call says so
 * instead. Its file name starts with "libblis", as the shim's rule reads it
 * (adapters/omp/whole_team.hpp). Nothing in it knows the shim. */
#include <omp.h>

#include "spin.h"

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
