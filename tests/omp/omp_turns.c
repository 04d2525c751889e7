/* Loops in which a thread waits for a teammate's turn, written the ways LLVM's OpenMP runtime
 * tests write them (omp_for_ordered, kmp_set_dispatch_buf): under throttling the shim must not
 * park a thread that a teammate spins for. Nothing in it knows about the shim.
 *   omp_turns ordered N R   R regions, each a schedule(static, 1) ordered loop of N iterations:
 *                           every thread's chunks, and its ordered turns, are its own
 *   omp_turns nowait N R    one region of R rounds of two nowait dynamic loops of N iterations:
 *                           a thread that runs ahead waits, in libomp, for the others to leave
 *                           an older loop's dispatch buffer
 * stdout: "ok <checksum>"; exit status 1 if an ordered turn came out of order. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: omp_turns ordered|nowait N R\n");
        return 2;
    }
    int n = atoi(argv[2]), rounds = atoi(argv[3]), bad = 0;
    long sum = 0;
    if (!strcmp(argv[1], "ordered")) {
        for (int r = 0; r < rounds; ++r) {
            int last = -1;
#pragma omp parallel
            {
#pragma omp for schedule(static, 1) ordered
                for (int i = 0; i < n; ++i) {
#pragma omp ordered
                    {
                        if (i != last + 1) bad = 1;
                        last = i;
                        sum += i;
                    }
                }
            }
        }
    } else if (!strcmp(argv[1], "nowait")) {
        long a = 0, b = 0;
#pragma omp parallel
        for (int r = 0; r < rounds; ++r) {
#pragma omp for schedule(dynamic) nowait
            for (int i = 0; i < n; ++i) {
#pragma omp atomic
                a += i;
            }
#pragma omp for schedule(dynamic) nowait
            for (int i = 0; i < n; ++i) {
#pragma omp atomic
                b += 2 * i;
            }
        }
        sum = a + b;
    } else {
        fprintf(stderr, "omp_turns: unknown mode %s\n", argv[1]);
        return 2;
    }
    printf("ok %ld\n", sum);
    return bad;
}
