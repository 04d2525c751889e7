/* The blocktime libomp's threads wait with, region by region (libomp only: kmp_get_blocktime is
 * its extension). ROUNDS regions of two threads, ROUND_MS of work per thread each; thread 1 reads
 * kmp_get_blocktime() in every region, which answers with the blocktime its team was forked with.
 * With SET, the program sets its own blocktime (kmp_set_blocktime) before its first region; with
 * SET@R, another thread of the program sets its own (libomp: that thread's ICV only) after round
 * R, and the main thread's teams go on with theirs. With `region`, the rounds are worksharing
 * loops of one region (NPB EP's shape), and thread 1 reads its blocktime at each loop's start,
 * after the last loop's barrier. Nothing in it knows the shim.
 *   omp_blocktime ROUNDS ROUND_MS [SET[@R] | region]
 * stdout: "omp_blocktime zero=<regions where thread 1 read 0> first=<its first reading>
 * last=<its last> checksum=<c>" (the checksum: the regions' work, the same in every run). */
#include <omp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spin.h"

int kmp_get_blocktime(void);
void kmp_set_blocktime(int msec);

static int zero = 0, first = -1, last = -1;  /* thread 1's readings (see above) */

static void note_reading(int seen) {
    if (seen == 0) ++zero;
    if (first < 0) first = seen;
    last = seen;
}

static void* set_blocktime(void* msec) {
    kmp_set_blocktime(*(int*)msec);
    return NULL;
}

int main(int argc, char** argv) {
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: omp_blocktime ROUNDS ROUND_MS [SET[@R] | region]\n");
        return 2;
    }
    int rounds = atoi(argv[1]);
    double round_us = atof(argv[2]) * 1e3;
    int one_region = argc == 4 && strcmp(argv[3], "region") == 0;
    int set = argc == 4 && !one_region ? atoi(argv[3]) : -1;
    const char* at = set >= 0 ? strchr(argv[3], '@') : NULL;
    int set_after = at ? atoi(at + 1) : -1;
    if (set >= 0 && !at) kmp_set_blocktime(set);
    unsigned long long checksum = 0;
    if (one_region) {
#pragma omp parallel num_threads(2) reduction(+ : checksum)
        for (int r = 0; r < rounds; ++r) {
#pragma omp for schedule(static)
            for (int i = 0; i < 2; ++i) {
                if (omp_get_thread_num() == 1) note_reading(kmp_get_blocktime());
                checksum += spin_us((uint64_t)(r * 2 + i), round_us);
            }
        }
    }
    for (int r = 0; !one_region && r < rounds; ++r) {
        int seen = -1;
#pragma omp parallel for num_threads(2) schedule(static) reduction(+ : checksum)
        for (int i = 0; i < 2; ++i) {
            if (omp_get_thread_num() == 1) seen = kmp_get_blocktime();
            checksum += spin_us((uint64_t)(r * 2 + i), round_us);
        }
        if (r == set_after) {
            pthread_t other;
            if (pthread_create(&other, NULL, set_blocktime, &set) != 0 || pthread_join(other, NULL) != 0) return 1;
        }
        note_reading(seen);
    }
    printf("omp_blocktime zero=%d first=%d last=%d checksum=%llu\n", zero, first, last, checksum);
    return 0;
}
