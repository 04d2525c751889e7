/* One extension module of a process that loads two copies of the OpenMP runtime (pip wheels
 * vendor their own libgomp, renamed by auditwheel, beside the system's): built once, linked
 * twice, against the system runtime and against a renamed copy (tests/omp/CMakeLists.txt).
 * mod_probe() reports what the outlined code sees of its team through the runtime this module
 * binds to, which the shim does not interpose: thread numbers, team sizes, a reduction over a
 * static loop (which gcc splits by omp_get_thread_num()/omp_get_num_threads()), and how many
 * threads ran a `single`. mod_spin() (gcc builds) reports the spin count of the libgomp this module
 * binds to, as libgomp reads it (gomp_counts.h): the shim must follow every copy's. */
#define _GNU_SOURCE
#include <omp.h>
#include <stdio.h>

int mod_probe(char* out, int len) {
    int tid[2] = {-1, -1}, nth[2] = {-1, -1};
#pragma omp parallel num_threads(2)
    {
        int t = omp_get_thread_num();
        if (t >= 0 && t < 2) {
            tid[t] = t;
            nth[t] = omp_get_num_threads();
        }
    }
    long sum = 0;
#pragma omp parallel for num_threads(2) reduction(+ : sum)
    for (long i = 1; i <= 1000; ++i) sum += i;
    int singles = 0;
#pragma omp parallel num_threads(2)
    {
#pragma omp single
        {
#pragma omp atomic
            singles++;
        }
    }
    return snprintf(out, (size_t)len, "tid=%d,%d nth=%d,%d sum=%ld singles=%d", tid[0], tid[1], nth[0], nth[1], sum,
                    singles);
}

#if !defined(__clang__)
#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>

#include "gomp_counts.h"

static volatile GompCount* g_spin_at;
static int g_looked;
static GompCount g_min = ~0ull, g_max;

/* The smallest and largest spin count this module's libgomp held over the calls ("spin=none"
 * where GOMP_SPINCOUNT is unset or the count was not found). The first call must come before
 * the shim could lower it (its first est_cycle); the shim may have raised it to libgomp's own
 * default by then, which is found too. */
int mod_spin(char* out, int len) {
    if (!g_looked) {
        g_looked = 1;
        const char* env = getenv("GOMP_SPINCOUNT");
        Dl_info info;
        struct link_map* lm = NULL;
        if (env && dladdr1((void*)&omp_get_thread_num, &info, (void**)&lm, RTLD_DL_LINKMAP) && lm) {
            GompCounts g = gomp_counts_find_or_default(lm->l_addr, strtoull(env, NULL, 10));
            if (g.found == 1) g_spin_at = g.spin;
        }
    }
    if (!g_spin_at) return snprintf(out, (size_t)len, "spin=none");
    GompCount v = *g_spin_at;
    if (v < g_min) g_min = v;
    if (v > g_max) g_max = v;
    return snprintf(out, (size_t)len, "spin=%llu-%llu", g_min, g_max);
}
#endif
