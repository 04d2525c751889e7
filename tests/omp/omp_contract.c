/* OpenMP's promises that real programs rely on, in one program built twice (clang -> libomp,
 * gcc -> libgomp). Nothing in it knows about the shim. Shapes taken from programs that the
 * shim once broke:
 *   - NPB EP/CG/MG: the whole timed loop in ONE region of static loops (only confinement can
 *     throttle it);
 *   - NPB IS: per-thread data sized by omp_get_max_threads(), indexed by omp_get_thread_num()
 *     (a team larger than promised writes out of bounds, a smaller one leaves entries unset);
 *   - OpenBLAS: work split into omp_get_max_threads() pieces whose threads spin until every
 *     piece has arrived (a smaller team hung NumPy).
 *   omp_contract REGIONS ITERS      REGIONS regions (the first one long: ITERS x 20 per thread)
 * stdout: "omp_contract checksum=<c>" (identical for every team size the program is promised,
 * and for smaller teams where it allowed dynamic adjustment);
 * stderr: "max_threads <m> team <t> mask <cpus in sched_getaffinity> child_mask <cpus of a
 * child process>" once; exit 3 when a promise is broken (message on stderr), 4 when teammates
 * waited for each other for more than 60 s. */
#define _GNU_SOURCE
#include <omp.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "spin.h"

static int cpus_in_mask(void) {
    cpu_set_t set;
    return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : -1;
}

/* The CPUs a child process starts with (it must be the original mask, not the shim's). */
static int child_mask(void) {
    FILE* p = popen("awk '/Cpus_allowed_list/ {print $2}' /proc/self/status", "r");
    if (!p) return -1;
    char line[256] = "", list[256] = "";
    while (fgets(line, sizeof line, p)) memcpy(list, line, sizeof list);
    pclose(p);
    int count = 0;
    for (char* s = strtok(list, ",\n"); s; s = strtok(NULL, ",\n")) {
        int a, b;
        if (sscanf(s, "%d-%d", &a, &b) == 2) count += b - a + 1;
        else if (sscanf(s, "%d", &a) == 1) count += 1;
    }
    return count;
}

int main(int argc, char** argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: omp_contract REGIONS ITERS\n");
        return 2;
    }
    int regions = atoi(argv[1]);
    long iters = atol(argv[2]);
    int max_threads = omp_get_max_threads();
    uint64_t* partial = calloc((size_t)max_threads, sizeof *partial); /* NPB IS's shape */
    uint64_t checksum = 0;
    int mask_inside = 0;
    for (int r = 0; r < regions; ++r) {
        int team = 0, broken = 0;
        volatile int arrived = 0;
        memset(partial, 0, (size_t)max_threads * sizeof *partial);
        long n = r == 0 ? iters * 20 : iters;
#pragma omp parallel
        {
            int me = omp_get_thread_num(), t = omp_get_num_threads();
#pragma omp single
            {
                team = t;
                mask_inside = cpus_in_mask();
            }
            /* While dynamic adjustment is off, OpenMP promises exactly max_threads threads. */
            if (me >= max_threads || (t != max_threads && !omp_get_dynamic())) {
#pragma omp atomic write
                broken = 1;
            } else {
                /* Static loops over max_threads pieces: thread k owns pieces k, k + t, ... */
                int done = 0;
                for (int piece = me; piece < max_threads; piece += t, ++done)
                    partial[piece] = work((uint64_t)(r * 1000 + piece), n);
                /* OpenBLAS's shape: wait (spinning, yielding) until every piece has arrived. */
#pragma omp atomic
                arrived += done;
                if (!wait_for_pieces(&arrived, max_threads, 60)) {
                    fprintf(stderr, "stalled: %d of %d pieces arrived\n", __atomic_load_n(&arrived, __ATOMIC_ACQUIRE),
                            max_threads);
                    exit(4);
                }
            }
        }
        if (broken) {
            fprintf(stderr, "broken promise: max_threads %d but a team of %d\n", max_threads, team);
            return 3;
        }
        for (int k = 0; k < max_threads; ++k) checksum = checksum * 31 + partial[k];
        if (r == 0)
            fprintf(stderr, "max_threads %d team %d mask %d child_mask %d\n", max_threads, team, mask_inside, child_mask());
    }
    printf("omp_contract checksum=%llu\n", (unsigned long long)checksum);
    free(partial);
    return 0;
}
