// Ends with tbb::finalize (blocking termination: TBB joins all its workers) and reports the
// threads left, so a test can see that nothing of TBB's outlives it under the shim (a parked
// worker would make finalize fail or hang).
//   tbb_finalize ROUNDS ITEMS ITEM_US
// stdout: "finalize ok|failed threads_before=<n> threads_after=<m>" (threads from /proc/self/task).
#include <dirent.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace {

int threads() {
    int n = 0;
    if (DIR* d = opendir("/proc/self/task")) {
        while (dirent* e = readdir(d))
            if (e->d_name[0] != '.') ++n;
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
