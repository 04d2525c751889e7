// Ends with tbb::finalize (blocking termination: TBB joins all its workers) and reports the
// threads left, so a test can see that nothing of TBB's outlives it under the shim (a parked
// worker would make finalize fail or hang).
//   tbb_finalize ROUNDS ITEMS ITEM_US
// stdout: "finalize ok|failed threads_before=<n> threads_after=<m>" (threads from /proc/self/task,
// not counting ones already exiting).
#include <dirent.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

// A joined thread stays listed in /proc/self/task until the kernel finishes its exit: glibc's join
// returns when the thread clears its tid, which the kernel does part-way through do_exit. Such a
// thread already carries PF_EXITING in its flags (field 9 of stat), so it is not counted: a
// preempted exit on a loaded machine must not read as a leaked worker.
bool exiting(const char* tid) {
    constexpr unsigned long pf_exiting = 0x4;
    char path[64], buf[512];
    std::snprintf(path, sizeof path, "/proc/self/task/%s/stat", tid);
    FILE* f = std::fopen(path, "r");
    if (!f) return true;  // gone between readdir and here
    std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
    std::fclose(f);
    buf[n] = '\0';
    const char* p = std::strrchr(buf, ')');  // the name may hold spaces and parentheses
    unsigned long flags = 0;
    // After ")": state ppid pgrp session tty_nr tpgid flags
    if (!p || std::sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags) != 1) return false;
    return flags & pf_exiting;
}

int threads() {
    int n = 0;
    if (DIR* d = opendir("/proc/self/task")) {
        while (dirent* e = readdir(d))
            if (e->d_name[0] != '.' && !exiting(e->d_name)) ++n;
        closedir(d);
    }
    return n;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: tbb_finalize ROUNDS ITEMS ITEM_US\n");
        return 2;
    }
    int rounds = std::atoi(argv[1]), items = std::atoi(argv[2]), item_us = std::atoi(argv[3]);
    tbb::task_scheduler_handle handle{tbb::attach{}};
    for (int r = 0; r < rounds; ++r)
        tbb::parallel_for(0, items, [item_us](int) {
            auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(item_us);
            while (std::chrono::steady_clock::now() < end) {
            }
        });
    int before = threads();
    bool ok = tbb::finalize(handle, std::nothrow);
    std::printf("finalize %s threads_before=%d threads_after=%d\n", ok ? "ok" : "failed", before, threads());
    return ok ? 0 : 1;
}
