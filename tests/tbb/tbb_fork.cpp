// fork() and exec() from a oneTBB program under the shim: the parent keeps computing while one
// child exits plainly and another execs a TBB program (the exec'd image re-registers with the
// same pid). Prints the parent's checksum; exits non-zero if a child failed.
//   tbb_fork PATH_TO_TBB_ROUNDS
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_reduce.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

static long long sum_to(long long n) {
    return tbb::parallel_reduce(
        tbb::blocked_range<long long>(0, n), 0LL,
        [](const tbb::blocked_range<long long>& r, long long acc) {
            for (long long i = r.begin(); i < r.end(); ++i) acc += i % 7;
            return acc;
        },
        [](long long a, long long b) { return a + b; });
}

int main(int argc, char** argv) {
    if (argc != 2) return 2;
    long long total = sum_to(20000000);
    pid_t plain = fork();
    if (plain == 0) {
        // Only this thread exists in the child (TBB's workers and the shim's controller do not):
        // serial work, then exit through atexit handlers, the shim's included.
        long long s = 0;
        for (long long i = 0; i < 1000; ++i) s += i % 7;
        std::exit(s == 2997 ? 0 : 3);
    }
    pid_t execd = fork();
    if (execd == 0) {
        execl(argv[1], argv[1], "10", "200", "100", static_cast<char*>(nullptr));
        _exit(4);
    }
    for (int i = 0; i < 5; ++i) total += sum_to(20000000);
    int st1 = 0, st2 = 0;
    waitpid(plain, &st1, 0);
    waitpid(execd, &st2, 0);
    std::printf("tbb_fork checksum=%lld plain=%d exec=%d\n", total, WEXITSTATUS(st1), WEXITSTATUS(st2));
    return (WIFEXITED(st1) && WEXITSTATUS(st1) == 0 && WIFEXITED(st2) && WEXITSTATUS(st2) == 0) ? 0 : 1;
}
