/* libgomp's spin-wait counts as libgomp itself reads them, before each of many short regions (gcc
 * build only), found by gomp_counts.h: the spin count and libgomp's count for oversubscription,
 * which libgomp spins while its threads outnumber the CPUs it saw at its start.
 *   omp_spin_count SECONDS
 * stdout: "spin_count found=<candidates> start=<v> min=<v> max=<v> tstart=<v> tmin=<v> tmax=<v>
 * regions=<n> checksum=<c> end=<v>" (t: the oversubscription count; -1 where both neighbours hold 100),
 * or "spin_count unset" when GOMP_SPINCOUNT is not in the environment. */
#define _GNU_SOURCE
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gomp_counts.h"
#include "spin.h"

typedef GompCount Count;

int main(int argc, char** argv) {
    double seconds = argc > 1 ? atof(argv[1]) : 1.0;
    const char* env = getenv("GOMP_SPINCOUNT");
    if (!env) {
        printf("spin_count unset\n");
        return 0;
    }
    Count want = strtoull(env, NULL, 10);
    /* Found before the first region: the shim's controller starts there, and may change the
     * count from its first cycle on. */
    GompCounts g = gomp_counts_find(0, want);
    int found = g.found;
    volatile Count *where = g.spin, *twhere = g.throttled;
    if (found != 1) {
        printf("spin_count found=%d\n", found);
        return 0;
    }
#pragma omp parallel
    spin_us(1, 10); /* libgomp started, its pool made */
    Count start = *where, lo = start, hi = start;
    long long tstart = twhere ? (long long)*twhere : -1, tlo = tstart, thi = tstart;
    unsigned long long checksum = 0, regions = 0;
    double t0 = now();
    while (now() - t0 < seconds) {
        /* Short regions a few microseconds apart (scikit-learn's gradient boosting). */
        for (int k = 0; k < 100; ++k, ++regions) {
#pragma omp parallel for schedule(static) reduction(+ : checksum)
            for (int i = 0; i < 64; ++i) checksum += spin_us((uint64_t)i + regions, 1);
            Count now_count = *where;
            if (now_count < lo) lo = now_count;
            if (now_count > hi) hi = now_count;
            if (twhere) {
                long long t = (long long)*twhere;
                if (t < tlo) tlo = t;
                if (t > thi) thi = t;
            }
        }
    }
    printf("spin_count found=%d start=%llu min=%llu max=%llu tstart=%lld tmin=%lld tmax=%lld regions=%llu checksum=%llu end=%llu\n",
           found, start, lo, hi, tstart, tlo, thi, regions, checksum, (unsigned long long)*where);
    return 0;
}
