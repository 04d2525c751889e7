/* An MPI + OpenMP program (Open MPI, Debian's openmpi-bin and libopenmpi-dev): each rank runs
 * ROUNDS rounds of a static loop over N elements on its OpenMP team, then sums the round's result
 * over every rank (MPI_Allreduce), as hybrid codes (cp2k.psmp, the NAS benchmarks' MPI+OpenMP
 * versions) do. Started by `mpirun -np R`, every rank is a process of its own, and so a job of its
 * own in the shim's table. The sums are integers, so the checksum is the same at any team size and
 * any number of ranks. Nothing in it knows the shim.
 *   omp_mpi ROUNDS N
 * stdout, one line per rank: "omp_mpi rank=<r> team=<largest team> max_threads=<omp_get_max_threads()>
 * cpus=<CPUs its threads ran on, a bit mask>", and rank 0's "omp_mpi ranks=<R> checksum=<c>". */
#define _GNU_SOURCE
#include <mpi.h>
#include <omp.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "spin.h"

int main(int argc, char** argv) {
    int provided, rank, ranks;
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) return 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    if (argc != 3 || atoi(argv[1]) < 1 || atol(argv[2]) < 1) {
        if (rank == 0) fprintf(stderr, "usage: omp_mpi ROUNDS N\n");
        MPI_Finalize();
        return 2;
    }
    const int rounds = atoi(argv[1]);
    const long n = atol(argv[2]);
    uint64_t checksum = 0, cpus = 0;
    int team = 0;
    for (int r = 0; r < rounds; ++r) {
        uint64_t local = 0;
        /* The rank's share of the round's elements: the same elements in all, whatever R. */
#pragma omp parallel reduction(+ : local)
        {
#pragma omp for schedule(static)
            for (long i = rank; i < n; i += ranks) local += work((uint64_t)r * (uint64_t)n + (uint64_t)i, 8);
            int cpu = sched_getcpu();
#pragma omp atomic
            cpus |= cpu >= 0 && cpu < 64 ? 1ull << cpu : 0;
#pragma omp master
            if (omp_get_num_threads() > team) team = omp_get_num_threads();
        }
        uint64_t sum = 0;
        MPI_Allreduce(&local, &sum, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
        checksum = checksum * 31 + sum;
    }
    printf("omp_mpi rank=%d team=%d max_threads=%d cpus=%#llx\n", rank, team, omp_get_max_threads(),
           (unsigned long long)cpus);
    if (rank == 0) printf("omp_mpi ranks=%d checksum=%llu\n", ranks, (unsigned long long)checksum);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
