// Cost of one desire update + DP in the shared table, with J = 1, 8, 64 live jobs.
//
// J-1 helper processes join the table and sleep (live rows, real pids); this process joins and
// times update() with alternating desires, so every update runs DP for real (grow then shrink).
// Every est_cycle one update also does the full /proc liveness scan; that cost is included,
// amortised, as the shim would pay it. Prints CSV rows: jobs,P,batch,ns_per_update.
//   gat_bench [--P N] [--jobs 1,8,64] [--batches 21] [--per-batch 2000]
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "adapters/common/clock.hpp"
#include "gat/table.hpp"

using apshim::now_s;

int main(int argc, char** argv) {
    int P = 64, batches = 21, per_batch = 2000;
    std::vector<int> job_counts{1, 8, 64};
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--P")) P = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--batches")) batches = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--per-batch")) per_batch = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--jobs")) {
            job_counts.clear();
            for (char* tok = std::strtok(argv[i + 1], ","); tok; tok = std::strtok(nullptr, ",")) job_counts.push_back(std::atoi(tok));
        }
    }
    std::printf("jobs,P,batch,ns_per_update\n");
    for (int J : job_counts) {
        char dir[] = "/tmp/apshim-bench-XXXXXX";
        if (!mkdtemp(dir)) return 1;
        std::string path = std::string(dir) + "/gat", err;
        auto t = apshim::gat::Table::open(path, {P, 5000}, err);
        if (!t) {
            std::fprintf(stderr, "gat_bench: %s\n", err.c_str());
            return 1;
        }
        std::vector<pid_t> kids;
        int ready[2];
        if (pipe(ready) != 0) return 1;
        for (int k = 0; k < J - 1; ++k) {
            pid_t pid = fork();
            if (pid == 0) {
                auto mine = apshim::gat::Table::open(path, {P, 5000}, err);
                if (!mine || mine->join(1 + k % P, 0.5, err) < 0) _exit(1);
                char c = 1;
                if (write(ready[1], &c, 1) != 1) _exit(1);
                pause();
                _exit(0);
            }
            kids.push_back(pid);
        }
        for (int k = 0; k < J - 1; ++k) {
            char c;
            if (read(ready[0], &c, 1) != 1) return 1;
        }
        int slot = t->join(1, 0.5, err);
        for (int b = 0; b < batches; ++b) {
            double t0 = now_s();
            for (int i = 0; i < per_batch; ++i) t->update(slot, (i & 1) ? P : 1, 1, 1000000000ull);
            double ns = (now_s() - t0) * 1e9 / per_batch;
            std::printf("%d,%d,%d,%.1f\n", J, P, b, ns);
        }
        for (pid_t pid : kids) kill(pid, SIGKILL);
        for (pid_t pid : kids) waitpid(pid, nullptr, 0);
        t.reset();
        unlink(path.c_str());
        rmdir(dir);
        close(ready[0]);
        close(ready[1]);
    }
    return 0;
}
