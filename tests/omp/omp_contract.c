/* OpenMP's promises that real programs rely on, in one program built twice (clang -> libomp,
 * gcc -> libgomp). Nothing in it knows about the shim. Shapes taken from programs that the
 * shim once broke:
 *   - NPB EP/CG/MG: the whole timed loop in ONE region of static loops (only confinement can
 *     throttle it);
 *   - NPB IS: per-thread data sized by omp_get_max_threads(), indexed by omp_get_thread_num()
 *     (a team larger than promised writes out of bounds, a smaller one leaves entries unset);
 *   - OpenBLAS: work split into omp_get_max_threads() pieces whose threads spin until every
 *     piece has arrived (a smaller team hung NumPy).
 *   omp_contract REGIONS ITERS [taskred]
 *                                   REGIONS regions (the first one long: ITERS x 20 per thread);
 *                                   taskred: each region has a task reduction (gcc forks it
 *                                   through GOMP_parallel_reductions, not GOMP_parallel)
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

/* One region's work on one thread (the region's body, the same in both forms of main's region). */
struct Round {
    int r, max_threads, team, broken, mask_inside;
    long n;
    uint64_t* partial;
    volatile int arrived;
};

static void region_body(struct Round* rd, long* pieces) {
    int me = omp_get_thread_num(), t = omp_get_num_threads();
#pragma omp single
    {
        rd->team = t;
        rd->mask_inside = cpus_in_mask();
    }
    /* While dynamic adjustment is off, OpenMP promises exactly max_threads threads. */
    if (me >= rd->max_threads || (t != rd->max_threads && !omp_get_dynamic())) {
#pragma omp atomic write
        rd->broken = 1;
        return;
    }
    /* Static loops over max_threads pieces: thread k owns pieces k, k + t, ... */
    int done = 0;
    for (int piece = me; piece < rd->max_threads; piece += t, ++done)
        rd->partial[piece] = work((uint64_t)(rd->r * 1000 + piece), rd->n);
    *pieces += done;
    /* OpenBLAS's shape: wait (spinning, yielding) until every piece has arrived. */
#pragma omp atomic
    rd->arrived += done;
    if (!wait_for_pieces(&rd->arrived, rd->max_threads, 60)) {
        fprintf(stderr, "stalled: %d of %d pieces arrived\n", __atomic_load_n(&rd->arrived, __ATOMIC_ACQUIRE),
                rd->max_threads);
        exit(4);
    }
}

int main(int argc, char** argv) {
    if (argc < 3 || (argc > 3 && strcmp(argv[3], "taskred") != 0)) {
        fprintf(stderr, "usage: omp_contract REGIONS ITERS [taskred]\n");
        return 2;
    }
    int regions = atoi(argv[1]);
    long iters = atol(argv[2]);
    int taskred = argc > 3;
    int max_threads = omp_get_max_threads();
    uint64_t* partial = calloc((size_t)max_threads, sizeof *partial); /* NPB IS's shape */
    uint64_t checksum = 0;
    for (int r = 0; r < regions; ++r) {
        struct Round rd = {.r = r, .max_threads = max_threads, .n = r == 0 ? iters * 20 : iters, .partial = partial};
        long pieces = 0;
        memset(partial, 0, (size_t)max_threads * sizeof *partial);
        if (taskred) {
            /* A task reduction over the region (gcc: GOMP_parallel_reductions). */
#pragma omp parallel reduction(task, + : pieces)
            region_body(&rd, &pieces);
        } else {
#pragma omp parallel reduction(+ : pieces)
            region_body(&rd, &pieces);
        }
        if (rd.broken) {
            fprintf(stderr, "broken promise: max_threads %d but a team of %d\n", max_threads, rd.team);
            return 3;
        }
        if (pieces != max_threads) {
            fprintf(stderr, "reduction: %ld pieces counted, %d made\n", pieces, max_threads);
            return 3;
        }
        for (int k = 0; k < max_threads; ++k) checksum = checksum * 31 + partial[k];
        if (r == 0)
            fprintf(stderr, "max_threads %d team %d mask %d child_mask %d\n", max_threads, rd.team, rd.mask_inside,
                    child_mask());
    }
    printf("omp_contract checksum=%llu\n", (unsigned long long)checksum);
    free(partial);
    return 0;
}
