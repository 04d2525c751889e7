/* A doacross loop: every iteration waits for the one before it. For clang (libomp) written the
 * way LLVM's runtime test kmp_doacross_check does it, libomp's doacross entry points called
 * around a nonmonotonic dynamic loop (libomp runs that as static_steal: each thread owns a range
 * up front); for gcc (libgomp) with ordered depend(). tests/peer found the clang form hanging
 * under the shim. Nothing in it knows about the shim.
 *   omp_doacross N
 * stdout: "ok <iterations>"; exit status 1 if an iteration ran before the one it waits for. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "spin.h"

#ifdef __clang__
struct dim {
    long long lo, up, st;
};
extern void __kmpc_doacross_init(void*, int, int, struct dim*);
extern void __kmpc_doacross_wait(void*, int, long long*);
extern void __kmpc_doacross_post(void*, int, long long*);
extern void __kmpc_doacross_fini(void*, int);
extern int __kmpc_global_thread_num(void*);
#endif

static int step(int* done, int i) {
    int bad = i > 1 && !__atomic_load_n(&done[i - 1], __ATOMIC_ACQUIRE);
    spin_us((uint64_t)i, 50);
    __atomic_store_n(&done[i], 1, __ATOMIC_RELEASE);
    return bad;
}

int main(int argc, char** argv) {
    int n = argc > 1 ? atoi(argv[1]) : 400;
    int* done = calloc((size_t)n, sizeof *done);
    int bad = 0;
#ifdef __clang__
#pragma omp parallel num_threads(4) reduction(+ : bad)
    {
        struct dim dims = {1, n - 1, 1};
        int gtid = __kmpc_global_thread_num(NULL);
        __kmpc_doacross_init(NULL, gtid, 1, &dims);
#pragma omp for nowait schedule(dynamic)
        for (int i = 1; i < n; ++i) {
            long long vec = i - 1;
            __kmpc_doacross_wait(NULL, gtid, &vec);
            bad += step(done, i);
            vec = i;
            __kmpc_doacross_post(NULL, gtid, &vec);
        }
        __kmpc_doacross_fini(NULL, gtid);
    }
#else
#pragma omp parallel for num_threads(4) ordered(1) schedule(dynamic) reduction(+ : bad)
    for (int i = 1; i < n; ++i) {
#pragma omp ordered depend(sink : i - 1)
        bad += step(done, i);
#pragma omp ordered depend(source)
    }
#endif
    free(done);
    printf("ok %d\n", n - 1);
    return bad ? 1 : 0;
}
