/* One extension module of a process that loads two copies of the OpenMP runtime (pip wheels
 * vendor their own libgomp, renamed by auditwheel, beside the system's): built once, linked
 * twice, against the system runtime and against a renamed copy (tests/omp/CMakeLists.txt).
 * mod_probe() reports what the outlined code sees of its team through the runtime this module
 * binds to, which the shim does not interpose: thread numbers, team sizes, a reduction over a
 * static loop (which gcc splits by omp_get_thread_num()/omp_get_num_threads()), and how many
 * threads ran a `single`. */
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
