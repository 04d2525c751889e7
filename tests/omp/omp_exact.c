/* A program that relies on exact team sizes, as OpenMP allows when dynamic adjustment is off
 * (LLVM's runtime tests omp_in_parallel, omp_barrier, kmp_task_modifier_*, omp_single_nowait;
 * tests/peer).
 * Built twice (clang -> libomp, gcc -> libgomp). Nothing in it knows about the shim.
 *   omp_exact MODE ROUNDS
 * MODE call:   omp_set_dynamic(0), omp_set_num_threads(4): every team must have 4 threads
 *      clause: num_threads(3) clause (dynamic adjustment left at its default, off): teams of 3
 *      env:    nothing (run it with OMP_DYNAMIC=false OMP_NUM_THREADS=4): teams of 4
 *      free:   omp_set_num_threads(4) only: dynamic adjustment is left at its default
 * stderr: "round <k> threads <team size>"; exit status: rounds whose team had another size
 * than asked for, and whose thread 3 (2 for clause) did not run (free: always 0). */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spin.h"

/* One thread's part of a region. */
static void region(int* team, int* last_ran, int want) {
#pragma omp single
    *team = omp_get_num_threads();
    if (omp_get_thread_num() == want - 1) *last_ran = 1;
#pragma omp for schedule(dynamic, 1)
    for (int i = 0; i < 16; ++i) spin_us((uint64_t)i, 300);
}

int main(int argc, char** argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: omp_exact call|clause|env|free ROUNDS\n");
        return 2;
    }
    const char* mode = argv[1];
    int rounds = atoi(argv[2]);
    int want = strcmp(mode, "clause") == 0 ? 3 : 4;
    if (strcmp(mode, "call") == 0) omp_set_dynamic(0);
    if (strcmp(mode, "env") != 0) omp_set_num_threads(4);
    int clause = strcmp(mode, "clause") == 0 ? 3 : 0;
    int bad = 0;
    for (int r = 0; r < rounds; ++r) {
        int team = 0, last_ran = 0; /* the last thread's share: lost when the team is smaller */
        if (clause > 0) {
#pragma omp parallel num_threads(clause)
            region(&team, &last_ran, want);
        } else {
#pragma omp parallel
            region(&team, &last_ran, want);
        }
        fprintf(stderr, "round %d threads %d\n", r, team);
        if (team != want || !last_ran) ++bad;
    }
    return strcmp(mode, "free") == 0 ? 0 : bad;
}
