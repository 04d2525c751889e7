/* OpenMP workloads for the integration tests, built twice (clang -> libomp, gcc -> libgomp).
 * Nothing in it knows about the shim.
 *   omp_work fib N CUTOFF [REPS]      REPS regions (default 1), each: parallel + single + fib(N)
 *                                     with a task per call above CUTOFF
 *   omp_work fibbar N CUTOFF [REPS]   the same, thread 0 instead of a single, then an explicit
 *                                     barrier
 *   omp_work fibu N CUTOFF [REPS]     untied tasks, as BOTS makes them: parallel + single nowait +
 *                                     an untied root task, every task untied
 *   omp_work imbalanced ROUNDS ITEMS  ROUNDS regions, each a schedule(dynamic) loop; item i
 *                                     costs about 40*(i+1) us (a triangular, imbalanced loop)
 *   omp_work static REGIONS ITEM_US   REGIONS short regions, each a schedule(static) loop of 64
 *                                     items of ITEM_US us
 *   omp_work loopy NTASKS TASK_MS     LOOPY: one region, one loop spawning NTASKS equal tasks
 *   omp_work fortasks ROUNDS NTASKS [TASK_US]
 *                                     ROUNDS regions, each a schedule(static) loop whose every
 *                                     iteration makes a task of TASK_US us (default 500): every
 *                                     thread makes tasks, and they meet at the loop's end (BOTS
 *                                     sparselu-for's shape); stderr "fortasks rep <r> most <m>
 *                                     all <n>": the most tasks one thread ran, and all
 *   omp_work flagwait ROUNDS 0        ROUNDS regions, each: parallel + single, whose thread makes a
 *                                     task that sets a flag and spins until it is set (a
 *                                     teammate in the barrier must run the task)
 *   [SERIAL_MS]                       imbalanced, static: serial work after every region
 * stdout: "<mode> ... checksum=<c> time_s=<t>"; stderr: "team <size>" once per region, and for
 * fib "fib_tasks rep <r> by_single <n> by_others <m>": tasks run by the thread that ran the single
 * and by its teammates. */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "spin.h"

static void report_team(void) { fprintf(stderr, "team %d\n", omp_get_num_threads()); }

/* Tasks run by each thread (team index) in the current region. */
static long tasks_run[256];

static void count_task(void) {
    int me = omp_get_thread_num();
    if (me < 256) {
#pragma omp atomic
        tasks_run[me]++;
    }
}

static long fib(int n, int cutoff) {
    if (n < 2) return n;
    if (n <= cutoff) return fib(n - 1, cutoff) + fib(n - 2, cutoff);
    long a, b;
#pragma omp task shared(a) firstprivate(n, cutoff)
    {
        count_task();
        a = fib(n - 1, cutoff);
    }
#pragma omp task shared(b) firstprivate(n, cutoff)
    {
        count_task();
        b = fib(n - 2, cutoff);
    }
#pragma omp taskwait
    return a + b;
}

/* fib with untied tasks (BOTS's default): clang splits an untied task at each task construct
 * and taskwait, and libomp queues the rest of it, so teammates always find work to take. */
static long fibu(int n, int cutoff) {
    if (n < 2) return n;
    if (n <= cutoff) return fib(n - 1, cutoff) + fib(n - 2, cutoff);
    long a, b;
#pragma omp task untied shared(a) firstprivate(n, cutoff)
    {
        count_task();
        a = fibu(n - 1, cutoff);
    }
#pragma omp task untied shared(b) firstprivate(n, cutoff)
    {
        count_task();
        b = fibu(n - 2, cutoff);
    }
#pragma omp taskwait
    return a + b;
}

int main(int argc, char** argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: omp_work fib|fibbar|fibu|imbalanced|static|loopy|fortasks|flagwait A B [SERIAL_MS]\n");
        return 2;
    }
    const char* mode = argv[1];
    int a = atoi(argv[2]), b = atoi(argv[3]), serial = argc > 4 ? atoi(argv[4]) : 0;
    unsigned long long checksum = 0;
    double t0 = now();
    if (!strcmp(mode, "fib") || !strcmp(mode, "fibbar") || !strcmp(mode, "fibu")) {
        int reps = serial > 0 ? serial : 1; /* fib's last argument is REPS, not SERIAL_MS */
        int explicit_barrier = !strcmp(mode, "fibbar"), untied = !strcmp(mode, "fibu");
        for (int r = 0; r < reps; ++r) {
            long x = 0;
            int single_thread = 0;
            memset(tasks_run, 0, sizeof tasks_run);
            if (untied) {
#pragma omp parallel
#pragma omp single nowait
#pragma omp task untied shared(x)
                {
                    report_team();
                    x = fibu(a, b);
                }
            } else if (explicit_barrier) {
                /* Thread 0 makes the tasks, everyone meets at an explicit barrier (GOMP_barrier,
                 * __kmpc_barrier): the teammates reach it at once, while thread 0 works. */
#pragma omp parallel
                {
                    if (omp_get_thread_num() == 0) {
                        report_team();
                        x = fib(a, b);
                    }
#pragma omp barrier
                }
            } else {
#pragma omp parallel
#pragma omp single
                {
                    report_team();
                    single_thread = omp_get_thread_num();
                    x = fib(a, b);
                }
            }
            long all = 0, by_single = single_thread < 256 ? tasks_run[single_thread] : 0;
            for (int i = 0; i < 256; ++i) all += tasks_run[i];
            fprintf(stderr, "fib_tasks rep %d by_single %ld by_others %ld\n", r, by_single, all - by_single);
            checksum = checksum * 31 + (unsigned long long)x;
        }
    } else if (!strcmp(mode, "imbalanced")) {
        uint64_t* out = calloc((size_t)b, sizeof *out);
        for (int r = 0; r < a; ++r) {
#pragma omp parallel
            {
#pragma omp single nowait
                report_team();
#pragma omp for schedule(dynamic, 1)
                for (int i = 0; i < b; ++i) out[i] = spin_us((uint64_t)r * b + i, 40.0 * (i + 1));
            }
            for (int i = 0; i < b; ++i) checksum = checksum * 31 + out[i];
            if (serial > 0) spin_us(0, serial * 1000.0);
        }
        free(out);
    } else if (!strcmp(mode, "static")) {
        uint64_t out[64];
        for (int r = 0; r < a; ++r) {
#pragma omp parallel
            {
#pragma omp single nowait
                report_team();
#pragma omp for schedule(static)
                for (int i = 0; i < 64; ++i) out[i] = spin_us((uint64_t)r * 64 + i, b);
            }
            for (int i = 0; i < 64; ++i) checksum = checksum * 31 + out[i];
            if (serial > 0) spin_us(0, serial * 1000.0);
        }
    } else if (!strcmp(mode, "loopy")) {
        uint64_t* out = calloc((size_t)a, sizeof *out);
#pragma omp parallel
#pragma omp single
        {
            report_team();
            for (int i = 0; i < a; ++i) {
#pragma omp task firstprivate(i)
                out[i] = spin_us((uint64_t)i, b * 1000.0);
            }
        }
        for (int i = 0; i < a; ++i) checksum = checksum * 31 + out[i];
        free(out);
    } else if (!strcmp(mode, "fortasks")) {
        uint64_t* out = calloc((size_t)b, sizeof *out);
        for (int r = 0; r < a; ++r) {
            memset(tasks_run, 0, sizeof tasks_run);
#pragma omp parallel
            {
#pragma omp single nowait
                report_team();
#pragma omp for schedule(static)
                for (int i = 0; i < b; ++i) {
#pragma omp task firstprivate(i)
                    {
                        count_task();
                        out[i] = spin_us((uint64_t)r * b + i, serial > 0 ? serial : 500);
                    }
                }
            }
            long all = 0, most = 0;
            for (int i = 0; i < 256; ++i) {
                all += tasks_run[i];
                if (tasks_run[i] > most) most = tasks_run[i];
            }
            fprintf(stderr, "fortasks rep %d most %ld all %ld\n", r, most, all);
            for (int i = 0; i < b; ++i) checksum = checksum * 31 + out[i];
        }
        free(out);
    } else if (!strcmp(mode, "flagwait")) {
        for (int r = 0; r < a; ++r) {
            int flag = 0;
#pragma omp parallel shared(flag)
#pragma omp single
            {
                report_team();
#pragma omp task shared(flag) firstprivate(r)
                {
#pragma omp atomic write
                    flag = r + 1;
                }
                int seen; /* no scheduling point here: a teammate runs the task */
                do {
#pragma omp atomic read
                    seen = flag;
                } while (seen == 0);
            }
            checksum = checksum * 31 + (unsigned long long)flag;
        }
    } else {
        fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
    }
    printf("%s %d %d checksum=%llu time_s=%.3f\n", mode, a, b, checksum, now() - t0);
    return 0;
}
