// A thread created by one that confinement does not hold: how soon is it confined?
//
// usage: late_thread TRIALS
//
// Two OpenMP threads compute until the end. A helper thread H waits until the shim has confined
// it (its real mask, read by a raw system call, narrower than at the start), then, TRIALS times:
// sets its own mask back to the start's with the raw system call (tests/omp/kernel_mask.h: one
// the shim's interposers do not see; H now stands for a thread the shim left unconfined, as its
// controller creating TBB's workers), creates a thread T through pthread_create, and polls both
// real masks every 200 us until both are narrower again. It prints which was confined first:
//   "trial I: first T|H|same t_ms T_MS h_ms H_MS"
// and at the end "T first in N of TRIALS". The shim lists the process's threads at its next cycle
// after a pthread_create, but reads back the masks of threads it already confined (H) only at its
// periodic scan, so T should come first in nearly every trial. Natively nothing is confined: it
// prints "never confined" after 5 s and exits 0.
#define _GNU_SOURCE
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "kernel_mask.h"

/* How many CPUs the kernel lets thread tid run on; -1 when its mask cannot be read. */
static int mask_count(pid_t tid) {
    cpu_set_t m;
    return kernel_mask_of(tid, &m) ? CPU_COUNT(&m) : -1;
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static cpu_set_t g_start;
static int g_start_count;
static atomic_int g_done;
static atomic_int g_stop_t;
static atomic_int g_t_tid;

static void* spin_t(void* arg) {
    (void)arg;
    atomic_store(&g_t_tid, (int)syscall(SYS_gettid));
    volatile unsigned long x = 0;
    while (!atomic_load(&g_stop_t)) ++x;
    return NULL;
}

static void* helper(void* arg) {
    int trials = *(int*)arg;
    pid_t self = (pid_t)syscall(SYS_gettid);
    double until = now_ms() + 5000;
    while (mask_count(self) >= g_start_count && now_ms() < until) usleep(1000);
    if (mask_count(self) >= g_start_count) {
        printf("never confined\n");
        atomic_store(&g_done, 1);
        return NULL;
    }
    usleep(300000);
    int t_first = 0;
    for (int i = 0; i < trials; ++i) {
        kernel_bind(&g_start);
        atomic_store(&g_stop_t, 0);
        atomic_store(&g_t_tid, 0);
        double t0 = now_ms();
        pthread_t t;
        if (pthread_create(&t, NULL, spin_t, NULL) != 0) {
            printf("pthread_create failed\n");
            exit(1);
        }
        while (atomic_load(&g_t_tid) == 0) usleep(50);
        pid_t ttid = atomic_load(&g_t_tid);
        double t_ms = -1, h_ms = -1;
        while ((t_ms < 0 || h_ms < 0) && now_ms() - t0 < 2000) {
            int tc = mask_count(ttid), hc = mask_count(self);
            double at = now_ms() - t0;
            if (t_ms < 0 && tc > 0 && tc < g_start_count) t_ms = at;
            if (h_ms < 0 && hc > 0 && hc < g_start_count) h_ms = at;
            usleep(200);
        }
        atomic_store(&g_stop_t, 1);
        pthread_join(t, NULL);
        const char* first = t_ms < 0 || h_ms < 0 ? "none" : t_ms < h_ms ? "T" : h_ms < t_ms ? "H" : "same";
        if (first[0] == 'T') ++t_first;
        printf("trial %d: first %s t_ms %.1f h_ms %.1f\n", i, first, t_ms, h_ms);
        fflush(stdout);
        usleep(150000);
    }
    printf("T first in %d of %d\n", t_first, trials);
    atomic_store(&g_done, 1);
    return NULL;
}

int main(int argc, char** argv) {
    int trials = argc > 1 ? atoi(argv[1]) : 7;
    kernel_mask(&g_start);
    g_start_count = CPU_COUNT(&g_start);
    pthread_t h;
    if (pthread_create(&h, NULL, helper, &trials) != 0) return 1;
    double sum = 0;
#pragma omp parallel num_threads(2) reduction(+ : sum)
    {
        volatile double x = 1;
        while (!atomic_load(&g_done)) {
            for (int k = 0; k < 100000; ++k) x = x * 1.0000001 + 1e-9;
        }
        sum += x > 0;
    }
    pthread_join(h, NULL);
    printf("threads that computed: %.0f\n", sum);
    return 0;
}
