/* OpenMP's ICVs are per thread: one pthread's omp_set_num_threads(1) is not another's. Thread A
 * sets its nthreads-var to 1 and forks; then thread B, which never called it, forks a default
 * region. Built twice (clang -> libomp, gcc -> libgomp); nothing in it knows about the shim.
 * stderr: "A team <n>" and "B team <n>" (B's team is omp_get_max_threads() of B: the default). */
#include <omp.h>
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t a_done = PTHREAD_COND_INITIALIZER;
static int a_finished = 0;

static void* thread_a(void* arg) {
    (void)arg;
    omp_set_num_threads(1);
    int team = 0;
#pragma omp parallel
    {
#pragma omp single
        team = omp_get_num_threads();
    }
    fprintf(stderr, "A team %d\n", team);
    pthread_mutex_lock(&lock);
    a_finished = 1;
    pthread_cond_signal(&a_done);
    pthread_mutex_unlock(&lock);
    return NULL;
}

static void* thread_b(void* arg) {
    (void)arg;
    pthread_mutex_lock(&lock);
    while (!a_finished) pthread_cond_wait(&a_done, &lock);
    pthread_mutex_unlock(&lock);
    int team = 0, max = omp_get_max_threads();
    for (int r = 0; r < 5; ++r) {
#pragma omp parallel
        {
#pragma omp single
            team = omp_get_num_threads();
        }
    }
    fprintf(stderr, "B team %d max %d\n", team, max);
    return NULL;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&b, NULL, thread_b, NULL);
    pthread_create(&a, NULL, thread_a, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    return 0;
}
