/* An OpenMP program that asks hwloc for the machine's topology, as GROMACS, Open MPI and other
 * hwloc users do at their start. On Linux hwloc_topology_load() binds the calling thread to each
 * CPU in turn (to read CPUID there) and then restores its mask: that is no binding, and the shim
 * must go on confining the job (it once stopped for good at the first sched_setaffinity, so
 * GROMACS kept 2 CPUs at allotment 1). "pin" then binds every OpenMP thread to one CPU of its own,
 * as GROMACS's `mdrun -pin on` does: a binding the program keeps, which the shim must respect.
 *   omp_hwloc probe|pin ROUNDS ITERS     ROUNDS regions of a static loop of ITERS steps in all
 * stdout: "omp_hwloc pus <n> checksum=<c>" (the same for every team size). */
#define _GNU_SOURCE
#include <hwloc.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Fixed work: the same instructions whatever the machine or the team. */
static uint64_t work(uint64_t seed, long iters) {
    uint64_t x = seed | 1;
    for (long i = 0; i < iters; ++i) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        x ^= x >> 29;
    }
    return x >> 33;
}

int main(int argc, char** argv) {
    if (argc != 4 || (strcmp(argv[1], "probe") != 0 && strcmp(argv[1], "pin") != 0)) {
        fprintf(stderr, "usage: omp_hwloc probe|pin ROUNDS ITERS\n");
        return 2;
    }
    const int pin = strcmp(argv[1], "pin") == 0;
    const int rounds = atoi(argv[2]);
    const long iters = atol(argv[3]);
    hwloc_topology_t topology;
    if (hwloc_topology_init(&topology) != 0 || hwloc_topology_load(topology) != 0) {
        fprintf(stderr, "omp_hwloc: hwloc cannot load the topology\n");
        return 1;
    }
    const int pus = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_PU);
    int failed = 0;
    if (pin) {
#pragma omp parallel reduction(+ : failed)
        {
            hwloc_obj_t pu = hwloc_get_obj_by_type(topology, HWLOC_OBJ_PU, omp_get_thread_num() % pus);
            failed += hwloc_set_cpubind(topology, pu->cpuset, HWLOC_CPUBIND_THREAD) != 0;
        }
    }
    uint64_t sum = 0;
    for (int r = 0; r < rounds; ++r) {
#pragma omp parallel for schedule(static) reduction(+ : sum)
        for (int i = 0; i < 64; ++i) sum += work((uint64_t)r * 1000003u + (uint64_t)i, iters / 64);
    }
    hwloc_topology_destroy(topology);
    if (failed) {
        fprintf(stderr, "omp_hwloc: %d threads could not be bound\n", failed);
        return 1;
    }
    printf("omp_hwloc pus %d checksum=%llu\n", pus, (unsigned long long)sum);
    return 0;
}
