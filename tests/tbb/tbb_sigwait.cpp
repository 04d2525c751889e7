// A oneTBB program that waits for its own signals, like oneTBB's test_tbb_fork
// (tests/peer/RESULTS.md): it does some parallel work, joins TBB's workers (tbb::finalize),
// blocks SIGCHLD and SIGALRM in its only thread (workers TBB starts from now on inherit the
// mask), then ROUNDS times forks a child that exits at once, lets the signal sit pending for a
// while (parallel work), and collects it with sigtimedwait; at the end it waits for an alarm
// the same way. A thread that leaves those signals unblocked takes them and this program waits
// in vain. Nothing in it knows about the shim.
//   tbb_sigwait ROUNDS
// stdout: "sum=<s>"; exit status: the number of signals that did not arrive within 2 s.
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include <tbb/global_control.h>
#include <tbb/parallel_for.h>

static long work(int round) {
    long sum = 0;
    for (int k = 0; k < 20; ++k) {  // about 20 ms: several of the shim's 5 ms cycles
        tbb::parallel_for(0, 256, [&](int i) {
            volatile long x = i + round;
            for (int j = 0; j < 2000; ++j) x = x * 31 + j;
        });
        sum += k;
        timespec nap{0, 1000000};
        nanosleep(&nap, nullptr);
    }
    return sum;
}

static bool collect(int sig) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    timespec timeout{2, 0};
    return sigtimedwait(&set, nullptr, &timeout) == sig;
}

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: tbb_sigwait ROUNDS\n");
        return 2;
    }
    int rounds = std::atoi(argv[1]);
    long sum = 0;
    {
        tbb::task_scheduler_handle handle{tbb::attach{}};
        sum += work(0);
        if (!tbb::finalize(handle, std::nothrow)) std::fprintf(stderr, "finalize did not join the workers\n");
    }
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGALRM);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    int missed = 0;
    for (int r = 1; r <= rounds; ++r) {
        pid_t pid = fork();
        if (pid == 0) _exit(0);
        sum += work(r);
        if (!collect(SIGCHLD)) {
            std::fprintf(stderr, "round %d: no SIGCHLD\n", r);
            ++missed;
        }
        waitpid(pid, nullptr, 0);
    }
    alarm(1);
    sum += work(rounds + 1);
    if (!collect(SIGALRM)) {
        std::fprintf(stderr, "no SIGALRM\n");
        ++missed;
    }
    std::printf("sum=%ld\n", sum);
    return missed;
}
