/* An OpenMP program that asks hwloc for the machine's topology, as GROMACS, Open MPI and other
 * hwloc users do at their start. On Linux hwloc_topology_load() binds the calling thread to each
 * CPU in turn (to read CPUID there) and then restores its mask: that is no binding, and the shim
 * must go on confining the job (it once stopped for good at the first sched_setaffinity, so
 * GROMACS kept 2 CPUs at allotment 1). "pin" then binds every OpenMP thread to one CPU of its own,
 * as GROMACS's `mdrun -pin on` does: a binding the program keeps, which the shim must respect.
 * "rawpin" binds them so halfway through, with the raw system call, as libraries dlopen'ed with
 * RTLD_DEEPBIND (oneTBB's tbbbind loads hwloc so) do: no interposer sees it. "syscallpin" does so
 * through libc's syscall(SYS_sched_setaffinity), as libomp's affinity code does (KMP_AFFINITY).
 * "probe" then probes again after the first region, as libomp's topology code does at its first
 * (libc's syscall, each CPU in turn, then the mask it read), with a pause of 0.25 s on each CPU: a
 * probing thread niced below a process on that CPU waits so long there, and that is no binding
 * either.
 *   omp_hwloc probe|pin|rawpin|syscallpin ROUNDS ITERS     ROUNDS regions of a static loop of ITERS steps
 * stdout: "omp_hwloc pus <n> checksum=<c>" (the same for every team size); stderr, pinned:
 * "pins lost <l> of <n>": threads no longer on the one CPU they chose at the end (raw system call). */
#define _GNU_SOURCE
#include <hwloc.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kernel_mask.h"
#include "spin.h"

/* The CPU a thread is pinned to: the n-th of the process's mask at its start. */
static cpu_set_t start_mask;
static int nth_cpu(int n) {
    int count = CPU_COUNT(&start_mask), seen = 0;
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &start_mask) && seen++ == n % count) return c;
    return 0;
}

static cpu_set_t only(int cpu) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    return one;
}
/* The system call itself (kernel_mask.h): what the kernel has, whatever an interposer would answer. */
static int raw_pin(int cpu) {
    cpu_set_t one = only(cpu);
    return kernel_bind(&one);
}
/* Through libc's syscall(), libomp's route. */
static int syscall_pin(int cpu) {
    cpu_set_t one = only(cpu);
    return syscall(SYS_sched_setaffinity, 0, sizeof one, &one) == 0 ? 0 : 1;
}
/* Each of the first 4 CPUs of the start mask in turn, 0.25 s on each, then the start mask. */
static int slow_probe(void) {
    int failed = 0;
    for (int n = 0; n < CPU_COUNT(&start_mask) && n < 4; ++n) {
        cpu_set_t one = only(nth_cpu(n));
        failed |= syscall(SYS_sched_setaffinity, 0, sizeof one, &one) != 0;
        usleep(250000);
    }
    return failed | (syscall(SYS_sched_setaffinity, 0, sizeof start_mask, &start_mask) != 0);
}
static int raw_is_pinned(int cpu) {
    cpu_set_t m;
    return kernel_mask(&m) && CPU_COUNT(&m) == 1 && CPU_ISSET(cpu, &m);
}

int main(int argc, char** argv) {
    if (argc != 4 || (strcmp(argv[1], "probe") != 0 && strcmp(argv[1], "pin") != 0 && strcmp(argv[1], "rawpin") != 0 &&
                      strcmp(argv[1], "syscallpin") != 0)) {
        fprintf(stderr, "usage: omp_hwloc probe|pin|rawpin|syscallpin ROUNDS ITERS\n");
        return 2;
    }
    const int pin = strcmp(argv[1], "pin") == 0, syscallpin = strcmp(argv[1], "syscallpin") == 0;
    const int late_pin = strcmp(argv[1], "rawpin") == 0 || syscallpin; /* pins halfway through */
    if (!kernel_mask(&start_mask)) return 1;
    const int rounds = atoi(argv[2]);
    const long iters = atol(argv[3]);
    hwloc_topology_t topology;
    if (hwloc_topology_init(&topology) != 0 || hwloc_topology_load(topology) != 0) {
        fprintf(stderr, "omp_hwloc: hwloc cannot load the topology\n");
        return 1;
    }
    const int pus = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_PU);
    const int probe = strcmp(argv[1], "probe") == 0;
    int failed = 0;
    if (pin) {
#pragma omp parallel reduction(+ : failed)
        {
            hwloc_bitmap_t one = hwloc_bitmap_alloc();
            hwloc_bitmap_only(one, (unsigned)nth_cpu(omp_get_thread_num()));
            failed += hwloc_set_cpubind(topology, one, HWLOC_CPUBIND_THREAD) != 0;
            hwloc_bitmap_free(one);
        }
    }
    uint64_t sum = 0;
    for (int r = 0; r < rounds; ++r) {
        if (probe && r == 1) failed += slow_probe(); /* the team and the shim at work: mid-run */
        if (late_pin && r == rounds / 2) {
#pragma omp parallel reduction(+ : failed)
            failed += syscallpin ? syscall_pin(nth_cpu(omp_get_thread_num())) : raw_pin(nth_cpu(omp_get_thread_num()));
        }
#pragma omp parallel for schedule(static) reduction(+ : sum)
        for (int i = 0; i < 64; ++i) sum += work((uint64_t)r * 1000003u + (uint64_t)i, iters / 64);
    }
    int lost = 0;
    if (pin || late_pin) {
#pragma omp parallel reduction(+ : lost)
        lost += !raw_is_pinned(nth_cpu(omp_get_thread_num()));
    }
    hwloc_topology_destroy(topology);
    if (failed) {
        fprintf(stderr, "omp_hwloc: %d threads could not be bound\n", failed);
        return 1;
    }
    printf("omp_hwloc pus %d checksum=%llu\n", pus, (unsigned long long)sum);
    if (pin || late_pin) fprintf(stderr, "pins lost %d of %d\n", lost, omp_get_max_threads());
    return 0;
}
