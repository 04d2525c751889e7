/* Tasks made inside tasks, and a task that waits for its parent, after WARM_MS of parallel busy
 * work (the shim has confined the job by then):
 *   omp_inline DEPTH WARM_MS
 * A binary task tree DEPTH deep: every task makes two child tasks, then waits for them. After
 * each task construct inside a task the maker looks whether that child has finished already (it
 * ran at once) or not (it was queued). Then a top-level task (made by the single's implicit task)
 * spins until its parent sets a flag after making it: a shim that ran it at once would hang.
 * stdout: "inline leaves=<2^DEPTH> nested=<tasks made inside tasks> queued=<of them, unfinished
 * after their construct> waiter=ok" (all but queued independent of timing). */
#include <omp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "spin.h"

static atomic_long g_nested, g_queued;

/* Right after a task construct made inside a task: did that child finish already? */
static void note_child(int inside_task, atomic_int* done) {
    if (!inside_task) return;
    atomic_fetch_add(&g_nested, 1);
    if (!atomic_load(done)) atomic_fetch_add(&g_queued, 1);
}

static long tree(int depth, int inside_task) {
    if (depth == 0) return 1;
    long a = 0, b = 0;
    atomic_int done_a = 0, done_b = 0;
#pragma omp task shared(a, done_a)
    {
        a = tree(depth - 1, 1);
        atomic_store(&done_a, 1);
    }
    note_child(inside_task, &done_a);
#pragma omp task shared(b, done_b)
    {
        b = tree(depth - 1, 1);
        atomic_store(&done_b, 1);
    }
    note_child(inside_task, &done_b);
#pragma omp taskwait
    return a + b;
}

int main(int argc, char** argv) {
    int depth = argc > 1 ? atoi(argv[1]) : 12;
    double warm_ms = argc > 2 ? atof(argv[2]) : 300;
    long leaves = 0;
    unsigned long sum = 0;
    atomic_int go = 0, waited = 0;
#pragma omp parallel reduction(+ : sum)
    {
        sum += spin_us((unsigned)omp_get_thread_num() + 1, warm_ms * 1000);
#pragma omp barrier
#pragma omp single
        {
            leaves = tree(depth, 0);
#pragma omp task shared(go, waited)
            {
                while (!atomic_load(&go)) {
                }
                atomic_store(&waited, 1);
            }
            atomic_store(&go, 1);
#pragma omp taskwait
        }
    }
    (void)sum;
    printf("inline leaves=%ld nested=%ld queued=%ld waiter=%s\n", leaves, atomic_load(&g_nested),
           atomic_load(&g_queued), atomic_load(&waited) ? "ok" : "missing");
    return 0;
}
