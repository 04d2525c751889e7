/* Phases, as GraphicsMagick's blur has them: a burst of tiny regions for BURST_MS (each thread's
 * share a few microseconds: only the regions' ends happen at any rate), then ROUNDS large regions of
 * static loops, ROUND_MS of work per thread each (a region end every ROUND_MS, nothing else the
 * runtime could count). Nothing in it knows the shim.
 *   omp_phases BURST_MS ROUNDS ROUND_MS [SERIAL_MS CHUNKS_MS]
 * With SERIAL_MS and CHUNKS_MS, as cdo's set-up and regridding: after the burst, SERIAL_MS of the
 * main thread's own work (no runtime call: CPU time without progress marks), then about CHUNKS_MS
 * of a dynamic loop (the chunks fetched are the marks), 100 us of work per chunk, before the rounds.
 * stdout: "omp_phases regions=<burst regions> checksum=<c>" (the checksum: the large regions' and
 * the chunks' work, the same however long the burst took). */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "spin.h"

int main(int argc, char** argv) {
    if (argc != 4 && argc != 6) {
        fprintf(stderr, "usage: omp_phases BURST_MS ROUNDS ROUND_MS [SERIAL_MS CHUNKS_MS]\n");
        return 2;
    }
    double burst_s = atof(argv[1]) / 1e3, round_us = atof(argv[3]) * 1e3;
    int rounds = atoi(argv[2]);
    enum { kItems = 8 };
    volatile uint64_t sink = 0;
    long regions = 0;
    for (double end = now() + burst_s; now() < end; ++regions) {
#pragma omp parallel for schedule(static)
        for (int i = 0; i < 2; ++i) sink += spin_us((uint64_t)i, 5);
    }
    unsigned long long checksum = 0;
    if (argc == 6) {
        sink += spin_us(7, atof(argv[4]) * 1e3);
        int chunks = (int)(atof(argv[5]) * 20); /* two threads, 100 us each */
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : checksum)
        for (int i = 0; i < chunks; ++i) checksum += spin_us((uint64_t)i, 100);
    }
    for (int r = 0; r < rounds; ++r) {
        /* Each thread of a team of two gets kItems / 2 items: ROUND_MS of work. */
#pragma omp parallel for schedule(static) reduction(+ : checksum)
        for (int i = 0; i < kItems; ++i) checksum += spin_us((uint64_t)(r * kItems + i), round_us * 2 / kItems);
    }
    printf("omp_phases regions=%ld checksum=%llu\n", regions, checksum);
    return 0;
}
