/* A program that uses neither oneTBB nor OpenMP: under the shim it must behave exactly as
 * without it (same output, no table, no extra thread, nothing on stderr). */
#include <dirent.h>
#include <stdio.h>

int main(void) {
    int threads = 0;
    DIR* d = opendir("/proc/self/task");
    for (struct dirent* e; d && (e = readdir(d));)
        if (e->d_name[0] != '.') ++threads;
    if (d) closedir(d);
    long sum = 0;
    for (long i = 0; i < 1000000; ++i) sum += i % 7;
    printf("sum=%ld threads=%d\n", sum, threads);
    return 0;
}
