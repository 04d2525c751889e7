/* Regions whose teams the runtime may size: the program allows dynamic adjustment
 * (omp_set_dynamic(1), as OMP_DYNAMIC=true does; with DYNAMIC 0 it leaves dyn-var as the
 * environment has it, calling no omp_set_dynamic). REGIONS regions, each a static loop over kItems
 * items of ITERS steps of fixed work (spin.h: work): the same work per region at any team size, as
 * a program written for OMP_DYNAMIC has it. Nothing in it knows the shim.
 *   omp_dynamic REGIONS ITERS [DYNAMIC]
 * stdout: "omp_dynamic regions=<REGIONS> team1=<regions run by a team of one> team_max=<largest
 * team> max_threads=<omp_get_max_threads()> loadavg=<its own getloadavg(), the 15-minute value, x100;
 * -1 when it fails> checksum=<c>" (the checksum: the work's results, the same at any team size). */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "spin.h"

int main(int argc, char** argv) {
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: omp_dynamic REGIONS ITERS [DYNAMIC]\n");
        return 2;
    }
    long regions = atol(argv[1]), iters = atol(argv[2]);
    enum { kItems = 8 };
    if (argc == 3 || atoi(argv[3]) != 0) omp_set_dynamic(1);
    unsigned long long checksum = 0;
    long team1 = 0;
    int team_max = 0;
    for (long r = 0; r < regions; ++r) {
        int team = 0;
#pragma omp parallel reduction(+ : checksum)
        {
            if (omp_get_thread_num() == 0) team = omp_get_num_threads();
#pragma omp for schedule(static)
            for (int i = 0; i < kItems; ++i) checksum += work((uint64_t)(r * kItems + i), iters);
        }
        team1 += team == 1;
        if (team > team_max) team_max = team;
    }
    double load[3];
    long loadavg = getloadavg(load, 3) == 3 ? (long)(load[2] * 100 + 0.5) : -1;
    printf("omp_dynamic regions=%ld team1=%ld team_max=%d max_threads=%d loadavg=%ld checksum=%llu\n", regions,
           team1, team_max, omp_get_max_threads(), loadavg, checksum);
    return 0;
}
