/* An OpenMP program for the fault campaign, built with gcc (libgomp) and clang (libomp):
 * ROUNDS rounds over ITEMS items of busy work (about ITEM_US microseconds each), as a dynamic
 * parallel loop or as one task per item, injecting on request a fault from inside the region
 * (on whichever thread runs that item):
 *   none              no fault
 *   fork_uexit        fork() in a loop body; the child does serial work and _exit(0)s
 *   fork_exit         fork() in a loop body; the child exit(0)s (atexit handlers run in it)
 *   fork_exec         fork() in a loop body; the child execs this program in mode "child"
 *   task_fork_uexit, task_fork_exit, task_fork_exec   the same from inside an explicit task
 *   exit_worker       after the checksum is printed, a non-master thread calls exit(0) in a region
 *   exit_main         after the checksum is printed, the master thread calls exit(0) in a region
 *   child             what fork_exec runs (as `child 4 40 1000`, about 160 ms of work): no fault
 *   fault_omp MODE ROUNDS ITEMS ITEM_US
 * stdout: "fault_omp mode=MODE checksum=C[ child=ok]", C as in fault_tbb.cpp. Exits 1 if a
 * child failed. */
#define _GNU_SOURCE
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static uint64_t work(uint64_t seed, int us) {
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    uint64_t end = now_us() + (uint64_t)us;
    for (int i = 0;; ++i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        if ((i & 255) == 0 && now_us() >= end) break;
    }
    __asm__ volatile("" : : "r"(x));
    return seed * 2654435761u % 1000003u;
}

static const char* g_self;
static const char* g_child_mode;  /* "uexit", "exit" or "exec" */
static int g_fired;
static pid_t g_child = -1;

static void fork_here(void) {
    if (__atomic_exchange_n(&g_fired, 1, __ATOMIC_SEQ_CST)) return;
    pid_t pid = fork();
    if (pid == 0) {
        if (strcmp(g_child_mode, "exec") == 0) {
            execl(g_self, g_self, "child", "4", "40", "1000", (char*)NULL);
            _exit(127);
        }
        uint64_t s = 0;
        for (uint64_t i = 0; i < 1000; ++i) s += work(i, 0);
        if (strcmp(g_child_mode, "exit") == 0) exit(s > 0 ? 0 : 3);
        _exit(s > 0 ? 0 : 3);
    }
    g_child = pid;
}

int main(int argc, char** argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: fault_omp MODE ROUNDS ITEMS ITEM_US\n");
        return 2;
    }
    g_self = argv[0];
    const char* mode = argv[1];
    int rounds = atoi(argv[2]), items = atoi(argv[3]), item_us = atoi(argv[4]);
    int tasks = strncmp(mode, "task_", 5) == 0;
    const char* m = tasks ? mode + 5 : mode;
    int forks = strncmp(m, "fork_", 5) == 0;
    if (forks) g_child_mode = m + 5;
    uint64_t checksum = 0;
    for (int r = 0; r < rounds; ++r) {
        uint64_t sum = 0;
        int fire_round = forks && r == rounds / 2;
        if (tasks) {
#pragma omp parallel
#pragma omp single
            for (int i = 0; i < items; ++i) {
#pragma omp task firstprivate(i) shared(sum)
                {
                    if (fire_round && i == items / 2) fork_here();
                    uint64_t v = work((uint64_t)r * (uint64_t)items + (uint64_t)i, item_us);
#pragma omp atomic
                    sum += v;
                }
            }
        } else {
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : sum)
            for (int i = 0; i < items; ++i) {
                if (fire_round && i == items / 2) fork_here();
                sum += work((uint64_t)r * (uint64_t)items + (uint64_t)i, item_us);
            }
        }
        checksum += sum;
    }
    printf("fault_omp mode=%s checksum=%llu", mode, (unsigned long long)checksum);
    if (forks) {
        int st = 0;
        int ok = g_child > 0 && waitpid(g_child, &st, 0) == g_child && WIFEXITED(st) && WEXITSTATUS(st) == 0;
        printf(" child=%s\n", ok ? "ok" : "failed");
        return ok ? 0 : 1;
    }
    printf("\n");
    if (strncmp(mode, "exit_", 5) == 0) {
        fflush(stdout);
        int worker = strcmp(mode, "exit_worker") == 0;
        /* Another region while one thread leaves the program through exit(): the others keep
         * running items, are parked, or wait at the barrier when atexit handlers run. */
#pragma omp parallel for schedule(dynamic, 1)
        for (int i = 0; i < items; ++i) {
            int master = omp_get_thread_num() == 0;
            if ((worker ? !master : (master && i >= items / 2)) && !__atomic_exchange_n(&g_fired, 1, __ATOMIC_SEQ_CST))
                exit(0);
            work((uint64_t)i, item_us);
        }
        exit(0); /* a team of one: leave from the master thread */
    }
    return 0;
}
