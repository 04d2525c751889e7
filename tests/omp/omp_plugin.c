/* An OpenMP plugin, built twice (gcc -> libgomp, clang -> libomp), for a host that links no
 * OpenMP and loads it with dlopen(RTLD_LOCAL), as Python loads NumPy's OpenBLAS: the runtime is
 * then outside the global scope. plugin_sum(items, item_us): a dynamic loop of spin work. */
#include <omp.h>
#include <stdint.h>

#include "spin.h"

long long plugin_sum(long long items, int item_us) {
    long long sum = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : sum)
    for (long long i = 0; i < items; ++i) sum += (long long)spin_us((uint64_t)i, item_us);
    return sum;
}
