/* late_libomp's plugin, built with clang -fopenmp (libomp): its first call initialises libomp. */
#include <omp.h>

int late_libomp_team(int* max_threads) {
    *max_threads = omp_get_max_threads();
    int team = 0;
#pragma omp parallel
    {
#pragma omp single
        team = omp_get_num_threads();
    }
    return team;
}
