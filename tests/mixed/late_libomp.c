/* A libomp loaded and first used late, by a process whose libgomp regions ran before it (a Python
 * process that imports a module built with gcc, then one built with clang). Nothing in it knows
 * about the shim.
 *   late_libomp PLUGIN [SECONDS]   (3)
 * Runs libgomp regions until the kernel runs this thread on fewer CPUs than it started with
 * (read with the system call instruction, which no library answers for the kernel), or for
 * SECONDS; then dlopen()s PLUGIN (late_libomp_plugin.c, built with clang: libomp) and asks it for libomp's
 * omp_get_max_threads() and the size of a default team.
 * stdout: "late_libomp confined_before_load=<0|1> gomp_max=<n> libomp_max=<n> libomp_team=<n>". */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernel_mask.h"

int main(int argc, char** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: late_libomp PLUGIN [SECONDS]\n");
        return 2;
    }
    double seconds = argc > 2 ? atof(argv[2]) : 3.0;
    int start = kernel_mask_cpus(), confined = 0;
    double sum = 0, t0 = omp_get_wtime();
    while (!confined && omp_get_wtime() - t0 < seconds) {
#pragma omp parallel for reduction(+ : sum)
        for (int i = 0; i < 200000; ++i) sum += i * 0.5;
        confined = kernel_mask_cpus() < start;
    }
    void* plugin = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!plugin) {
        fprintf(stderr, "late_libomp: %s\n", dlerror());
        return 1;
    }
    int (*team)(int*) = (int (*)(int*))dlsym(plugin, "late_libomp_team");
    if (!team) {
        fprintf(stderr, "late_libomp: no late_libomp_team in %s\n", argv[1]);
        return 1;
    }
    int libomp_max = 0, libomp_team = team(&libomp_max);
    printf("late_libomp confined_before_load=%d gomp_max=%d libomp_max=%d libomp_team=%d\n", confined,
           omp_get_max_threads(), libomp_max, libomp_team);
    return sum > 0 ? 0 : 1;
}
