/* A stand-in for Eigen's parallel matrix product (Eigen 3.4's `parallelize_gemm`, a header library
 * compiled into the program's own shared objects: R's RcppML, OpenMx, glmmTMB): it forks a region
 * of omp_get_max_threads() threads, splits the work over the team it gets (omp_get_num_threads():
 * any size will do) and its threads wait for each other in spin loops without a yield, as Eigen's
 * wait for each other's packed blocks. The shim knows it by the name of the function that forks
 * (adapters/omp/whole_team.hpp: function_team_need), which this one carries: an instantiation of
 * Eigen::internal::parallelize_gemm, exported from this library as Eigen's are from those.
 * Nothing in it knows the shim. */
#define _GNU_SOURCE
#include <omp.h>
#include <stdint.h>

#include "meetings.h"

/* Returns the checksum; *widest: the most CPUs a thread of the team could run on at its last
 * meeting; *team: the team's size. */
uint64_t standin_eigen_meetings(int meetings, long iters, int* widest, int* team) EIGEN_GEMM_STANDIN_SYMBOL;
uint64_t standin_eigen_meetings(int meetings, long iters, int* widest, int* team) {
    int arrived = 0, sense = 0, most = 0;
    uint64_t sum = 0;
#pragma omp parallel num_threads(omp_get_max_threads()) reduction(+ : sum)
    {
        if (omp_get_thread_num() == 0) *team = omp_get_num_threads();
        sum += meet(meetings, iters, &arrived, &sense, &most);
    }
    *widest = most;
    return sum;
}
