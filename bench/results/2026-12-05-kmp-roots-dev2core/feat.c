// Less common OpenMP features, one per argument; prints a deterministic answer.
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>

static long work(long n) { long s = 0; for (long i = 0; i < n; ++i) s += (i * 2654435761u) % 1000; return s; }

static void host_teams(void) {
    long sums[4] = {0};
    #pragma omp teams num_teams(4)
    {
        int t = omp_get_team_num();
        long s = 0;
        #pragma omp parallel for reduction(+:s)
        for (int i = 0; i < 400; ++i) s += work(20000 + i);
        sums[t] = s;
    }
    printf("teams %ld %ld %ld %ld\n", sums[0], sums[1], sums[2], sums[3]);
}

static void pause_resource(void) {
    long total = 0;
    for (int r = 0; r < 20; ++r) {
        long s = 0;
        #pragma omp parallel for reduction(+:s)
        for (int i = 0; i < 200; ++i) s += work(20000 + i);
        total += s;
        if (r % 5 == 4) omp_pause_resource_all(omp_pause_soft);
    }
    printf("pause %ld\n", total);
}

static void spin_flag_tasks(void) {
    // Task A waits (taskyield) for a flag that task B sets; conforming only with 2+ threads running.
    atomic_int flag = 0; long a = 0, b = 0;
    #pragma omp parallel num_threads(2)
    #pragma omp single
    {
        #pragma omp task shared(flag, a)
        { while (!atomic_load(&flag)) { 
            #pragma omp taskyield
          } a = work(100000); }
        #pragma omp task shared(flag, b)
        { b = work(200000); atomic_store(&flag, 1); }
    }
    printf("spin %ld %ld\n", a, b);
}

static void detached(void) {
    long total = 0;
    for (int r = 0; r < 200; ++r) {
        long x = 0;
        #pragma omp parallel
        #pragma omp single
        {
            omp_event_handle_t ev;
            #pragma omp task detach(ev) shared(x)
            { x = work(10000 + r); }
            #pragma omp task firstprivate(ev)
            { work(5000); omp_fulfill_event(ev); }
            #pragma omp taskwait
        }
        total += x;
    }
    printf("detach %ld\n", total);
}

static void two_tasks(void) {
    long total = 0;
    for (int r = 0; r < 200; ++r) {
        long x = 0, y = 0;
        #pragma omp parallel
        #pragma omp single
        {
            #pragma omp task shared(x)
            x = work(10000 + r);
            #pragma omp task shared(y)
            y = work(5000 + r);
            #pragma omp taskwait
        }
        total += x + y;
    }
    printf("two %ld\n", total);
}

static void cancel_loop(void) {
    long found = -1;
    for (int r = 0; r < 50; ++r) {
        #pragma omp parallel shared(found)
        {
            #pragma omp for schedule(dynamic, 4)
            for (int i = 0; i < 4000; ++i) {
                work(2000);
                if (i == 3000 + r) {
                    #pragma omp atomic write
                    found = i;
                    #pragma omp cancel for
                }
                #pragma omp cancellation point for
            }
        }
    }
    printf("cancel %ld\n", found);
}

static void nested(void) {
    omp_set_max_active_levels(2);
    long s = 0;
    #pragma omp parallel num_threads(2) reduction(+:s)
    {
        #pragma omp parallel num_threads(2) reduction(+:s)
        {
            #pragma omp for
            for (int i = 0; i < 400; ++i) s += work(20000 + i);
        }
    }
    printf("nested %ld\n", s);
}

static void barrier_spin(void) {
    // Threads spin on each other's progress (a hand-made pipeline), team as large as promised.
    int n = omp_get_max_threads();
    atomic_long *stage = calloc(n, sizeof *stage);
    long out = 0;
    #pragma omp parallel reduction(+:out)
    {
        int me = omp_get_thread_num(), nt = omp_get_num_threads();
        for (long k = 1; k <= 2000; ++k) {
            if (me > 0) while (atomic_load(&stage[me - 1]) < k) {}
            out += work(200 + me);
            atomic_store(&stage[me], k);
        }
        (void)nt;
    }
    printf("pipeline %ld\n", out);
    free(stage);
}

int main(int argc, char **argv) {
    int reps = getenv("REPS") ? atoi(getenv("REPS")) : 1;
    for (int rep = 0; rep < reps; ++rep)
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "teams")) host_teams();
        else if (!strcmp(argv[i], "pause")) pause_resource();
        else if (!strcmp(argv[i], "spin")) spin_flag_tasks();
        else if (!strcmp(argv[i], "detach")) detached();
        else if (!strcmp(argv[i], "cancel")) cancel_loop();
        else if (!strcmp(argv[i], "two")) two_tasks();
        else if (!strcmp(argv[i], "nested")) nested();
        else if (!strcmp(argv[i], "pipeline")) barrier_spin();
    }
    return 0;
}
