/* A stand-in for OpenBLAS's OpenMP build (exec_blas in libopenblas0-openmp): each call splits its
 * work into omp_get_max_threads() pieces, one per thread of a num_threads(n) region, and every
 * piece waits, yielding, until all of them have arrived. A smaller team never completes (NumPy,
 * SciPy and Octave hung so with OMP_DYNAMIC=true at allotment 1, and natively under load); here
 * a wait gives up after 2 s and the call says so, so that a test fails instead of hanging. Its
 * file name holds "openblas", as the shim's rule for whole teams reads it
 * (adapters/omp/whole_team.hpp). Nothing in it knows the shim. */
#include <omp.h>

#include "spin.h"

/* Returns 1 when every piece arrived, 0 when a wait gave up; *team: the team's size. */
int standin_blas_call(int* team) {
    int n = omp_get_max_threads(), complete = 1;
    volatile int arrived = 0;
#pragma omp parallel for num_threads(n) schedule(static)
    for (int piece = 0; piece < n; ++piece) {
        if (piece == 0) *team = omp_get_num_threads();
        (void)spin_us((uint64_t)piece, 50);
#pragma omp atomic
        arrived += 1;
        if (!wait_for_pieces(&arrived, n, 2)) {
#pragma omp atomic write
            complete = 0;
        }
    }
    return complete;
}
