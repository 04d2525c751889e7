/* A program that calls a stand-in for BLIS (blis_standin.c: its threads meet in spin-waits
 * without a yield), one for Eigen's parallel product (eigen_standin.c: the same meetings, any team
 * size) and, in turn, regions of its own of the same shape, and `parallel sections` regions of two
 * sections that meet so (velvet's shape: a producer and a consumer), CALLS times each, with the
 * team OpenMP promises (dynamic adjustment off: the default). Under the shim at allotment 1 the
 * libraries' teams and the sections run on a CPU per thread while they run, the program's own
 * regions confined (adapters/omp/whole_team.hpp: spins_at_meetings, sections_may_meet).
 *   omp_spinning_team CALLS MEETINGS ITERS [sections|eigen]
 * `sections`: only `parallel sections` as velvet writes it, which gcc's libgomp sizes at its fork
 * (GOMP_parallel_sections): a team of one would wait for ever where dynamic adjustment is on.
 * `eigen`: only the Eigen stand-in, whose team may be of any size where dynamic adjustment is on.
 * stdout: "omp_spinning_team calls=<n> checksum=<c> blis_widest=<w,...> eigen_widest=<w,...>
 * eigen_teams=<t,...> own_widest=<w,...> sections_widest=<w,...> max_threads=<m>": per call, the
 * most CPUs a thread of its team could run on at its last meeting (and the Eigen stand-in's team
 * size). */
#define _GNU_SOURCE
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "meetings.h"

uint64_t standin_blis_meetings(int meetings, long iters, int* widest);
uint64_t standin_eigen_meetings(int meetings, long iters, int* widest, int* team) EIGEN_GEMM_STANDIN_SYMBOL;

int main(int argc, char** argv) {
    if (argc != 4 && !(argc == 5 && (strcmp(argv[4], "sections") == 0 || strcmp(argv[4], "eigen") == 0))) {
        fprintf(stderr, "usage: omp_spinning_team CALLS MEETINGS ITERS [sections|eigen]\n");
        return 2;
    }
    const int sections_only = argc == 5 && strcmp(argv[4], "sections") == 0;
    const int eigen_only = argc == 5 && strcmp(argv[4], "eigen") == 0;
    int calls = atoi(argv[1]), meetings = atoi(argv[2]);
    long iters = atol(argv[3]);
    if (calls < 1 || calls > 100 || meetings < 1 || iters < 8) {
        fprintf(stderr, "omp_spinning_team: CALLS in 1..100, MEETINGS >= 1, ITERS >= 8\n");
        return 2;
    }
    uint64_t checksum = 0;
    char blis[512] = "", eigen[512] = "", eigen_teams[512] = "", own[512] = "", sections[512] = "";
    int at_blis = 0, at_eigen = 0, at_eigen_teams = 0, at_own = 0, at_sections = 0;
    for (int c = 0; c < calls; ++c) {
        int arrived = 0, sense = 0, most = 0;
        uint64_t sum = 0;
        if (!sections_only) {
            int widest = 0, team = 0;
            checksum = checksum * 31 + standin_eigen_meetings(meetings, iters, &widest, &team);
            at_eigen += snprintf(eigen + at_eigen, sizeof eigen - at_eigen, "%s%d", c ? "," : "", widest);
            at_eigen_teams += snprintf(eigen_teams + at_eigen_teams, sizeof eigen_teams - at_eigen_teams, "%s%d",
                                       c ? "," : "", team);
        }
        if (eigen_only) continue;
        if (!sections_only) {
            int widest = 0;
            checksum = checksum * 31 + standin_blis_meetings(meetings, iters, &widest);
            at_blis += snprintf(blis + at_blis, sizeof blis - at_blis, "%s%d", c ? "," : "", widest);
#pragma omp parallel reduction(+ : sum)
            sum += meet(meetings, iters, &arrived, &sense, &most);
            checksum = checksum * 31 + sum;
            at_own += snprintf(own + at_own, sizeof own - at_own, "%s%d", c ? "," : "", most);
        }
        /* Two sections, one party each: a team of one would wait for ever (OpenMP promises two).
         * In turn: `parallel sections` as velvet writes it (gcc: GOMP_parallel_sections); with a
         * reduction, which gcc compiles as `parallel` + `sections` (GOMP_parallel,
         * GOMP_sections_start); and a `sections` construct with a task reduction inside a
         * `parallel` region (gcc: GOMP_sections2_start; clang's builds: a plain reduction). */
        arrived = sense = most = 0;
        sum = 0;
        if (c % 3 == 0 || sections_only) {
#pragma omp parallel sections num_threads(2)
            {
#pragma omp section
                __atomic_add_fetch(&sum, meet_as(0, 2, meetings, iters, &arrived, &sense, &most), __ATOMIC_RELAXED);
#pragma omp section
                __atomic_add_fetch(&sum, meet_as(1, 2, meetings, iters, &arrived, &sense, &most), __ATOMIC_RELAXED);
            }
        } else if (c % 3 == 1) {
#pragma omp parallel sections num_threads(2) reduction(+ : sum)
            {
#pragma omp section
                sum += meet_as(0, 2, meetings, iters, &arrived, &sense, &most);
#pragma omp section
                sum += meet_as(1, 2, meetings, iters, &arrived, &sense, &most);
            }
        } else {
#if defined(__clang__)
#define APSHIM_SECTIONS_REDUCTION reduction(+ : sum)
#else
#define APSHIM_SECTIONS_REDUCTION reduction(task, + : sum)
#endif
#pragma omp parallel num_threads(2)
#pragma omp sections APSHIM_SECTIONS_REDUCTION
            {
#pragma omp section
                sum += meet_as(0, 2, meetings, iters, &arrived, &sense, &most);
#pragma omp section
                sum += meet_as(1, 2, meetings, iters, &arrived, &sense, &most);
            }
        }
        checksum = checksum * 31 + sum;
        at_sections += snprintf(sections + at_sections, sizeof sections - at_sections, "%s%d", c ? "," : "", most);
    }
    printf("omp_spinning_team calls=%d checksum=%llu blis_widest=%s eigen_widest=%s eigen_teams=%s own_widest=%s "
           "sections_widest=%s max_threads=%d\n",
           calls, (unsigned long long)checksum, blis, eigen, eigen_teams, own, sections, omp_get_max_threads());
    return 0;
}
