/* A program that allows smaller teams (run with OMP_DYNAMIC=true) and calls libraries that do
 * not cope with them (openblas_standin.c, OpenBLAS's shape: whole teams only; blis_standin.c,
 * BLIS's: a whole team or one), in turn with regions of its own, for SECONDS. The libraries' teams
 * must be as they need, the program's own may shrink, and its dyn-var must read as it set it
 * after each library call.
 *   omp_whole_team SECONDS
 * stdout: "omp_whole_team calls=<n> incomplete=<OpenBLAS stand-in calls whose pieces gave up>
 * lib_team_min=<m> blis_bad=<BLIS stand-in calls in a team neither whole nor one> blis_team_min=<m>
 * own_team_min=<m> own_team_last=<t> dynamic_changed=<library calls after which omp_get_dynamic()
 * differed> max_threads=<m>" */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "spin.h"

int standin_blas_call(int* team);
int standin_blis_call(int* team);

int main(int argc, char** argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: omp_whole_team SECONDS\n");
        return 2;
    }
    double end = now() + atof(argv[1]);
    int max_threads = omp_get_max_threads(), dynamic = omp_get_dynamic();
    int calls = 0, incomplete = 0, lib_min = max_threads, own_min = max_threads, own_last = 0, changed = 0;
    int blis_bad = 0, blis_min = max_threads;
    while (now() < end) {
        int team = 0;
        incomplete += !standin_blas_call(&team);
        ++calls;
        if (team < lib_min) lib_min = team;
        changed += omp_get_dynamic() != dynamic;
        blis_bad += !standin_blis_call(&team);
        if (team < blis_min) blis_min = team;
        changed += omp_get_dynamic() != dynamic;
#pragma omp parallel
        {
#pragma omp single
            own_last = omp_get_num_threads();
            (void)spin_us((uint64_t)omp_get_thread_num(), 200);
        }
        if (own_last < own_min) own_min = own_last;
    }
    printf("omp_whole_team calls=%d incomplete=%d lib_team_min=%d blis_bad=%d blis_team_min=%d own_team_min=%d "
           "own_team_last=%d dynamic_changed=%d max_threads=%d\n",
           calls, incomplete, lib_min, blis_bad, blis_min, own_min, own_last, changed, max_threads);
    return 0;
}
