/* The blocktime libomp's threads wait with, region by region (libomp only: kmp_get_blocktime is
 * its extension). ROUNDS regions of two threads, ROUND_MS of work per thread each; thread 1 reads
 * kmp_get_blocktime() in every region, which answers with the blocktime its team was forked with.
 * With SET, the program sets its own blocktime (kmp_set_blocktime) before its first region.
 * Nothing in it knows the shim.
 *   omp_blocktime ROUNDS ROUND_MS [SET]
 * stdout: "omp_blocktime zero=<regions where thread 1 read 0> first=<its first reading>
 * last=<its last> checksum=<c>" (the checksum: the regions' work, the same in every run). */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "spin.h"

int kmp_get_blocktime(void);
void kmp_set_blocktime(int msec);

int main(int argc, char** argv) {
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: omp_blocktime ROUNDS ROUND_MS [SET]\n");
        return 2;
    }
    int rounds = atoi(argv[1]);
    double round_us = atof(argv[2]) * 1e3;
    if (argc == 4) kmp_set_blocktime(atoi(argv[3]));
    int zero = 0, first = -1, last = -1;
    unsigned long long checksum = 0;
    for (int r = 0; r < rounds; ++r) {
        int seen = -1;
#pragma omp parallel for num_threads(2) schedule(static) reduction(+ : checksum)
        for (int i = 0; i < 2; ++i) {
            if (omp_get_thread_num() == 1) seen = kmp_get_blocktime();
            checksum += spin_us((uint64_t)(r * 2 + i), round_us);
        }
        if (seen == 0) ++zero;
        if (first < 0) first = seen;
        last = seen;
    }
    printf("omp_blocktime zero=%d first=%d last=%d checksum=%llu\n", zero, first, last, checksum);
    return 0;
}
