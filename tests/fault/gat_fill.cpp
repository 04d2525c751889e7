// Fills a table's rows with stand-in jobs: forks N child processes that each join the table
// (APSHIM_GAT, APSHIM_P, APSHIM_EST_CYCLE_MS from the environment) with desire 1 and then wait.
// Prints "ready JOINED FAILED" once every child has tried, then waits for EOF on stdin; the
// children leave the table and exit when this process closes their pipe (or dies).
// With --stop-holding-lock each child, 300 ms after it joined, takes the table's lock and stops itself in it
// (a job SIGSTOPped mid-update: tests/programs/test_stopped_corunner.py); continued (SIGCONT), it
// lets go of the lock and waits as the others do.
//   gat_fill N [--stop-holding-lock]
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "gat/table.hpp"
#include "shim/options.hpp"

extern char** environ;

int main(int argc, char** argv) {
    bool stop_holding = argc == 3 && std::string(argv[2]) == "--stop-holding-lock";
    if (argc != 2 && !stop_holding) {
        std::fprintf(stderr, "usage: gat_fill N [--stop-holding-lock]\n");
        return 2;
    }
    int n = std::atoi(argv[1]);
    apshim::Options o = apshim::parse_options(environ, [](const char* line) { std::fprintf(stderr, "%s\n", line); });
    int ready[2], hold[2];
    if (pipe(ready) != 0 || pipe(hold) != 0) return 1;
    signal(SIGPIPE, SIG_IGN);
    for (int k = 0; k < n; ++k) {
        pid_t pid = fork();
        if (pid < 0) {
            std::fprintf(stderr, "gat_fill: fork failed after %d children\n", k);
            break;
        }
        if (pid == 0) {
            close(ready[0]);
            close(hold[1]);
            std::string err;
            auto t = apshim::gat::Table::open(o.gat, {o.P, static_cast<std::uint32_t>(std::lround(o.est_cycle_ms * 1000))}, err);
            int slot = t ? t->join(1, o.eta, err) : -1;
            // Hundreds of children joining at once on few cores can wait longer than join()'s
            // 1 s for the lock; only "table full" is an answer, so retry the rest a few times.
            for (int tries = 0; t && slot < 0 && err.find("table full") == std::string::npos && tries < 30; ++tries)
                slot = t->join(1, o.eta, err);
            // A moment first, for the other jobs to follow the allotments this join gave them.
            if (stop_holding && slot >= 0) usleep(300000);
            bool holding = stop_holding && slot >= 0 && t->lock(1000000000ull);
            char c = slot >= 0 ? 'J' : 'F';
            if (write(ready[1], &c, 1) != 1) _exit(1);
            close(ready[1]);
            if (holding) {
                raise(SIGSTOP);
                t->unlock();
            }
            char buf;
            while (read(hold[0], &buf, 1) > 0) {
            }
            if (slot >= 0) t->leave(slot);
            _exit(0);
        }
    }
    close(ready[1]);
    close(hold[0]);
    int joined = 0, failed = 0;
    char c;
    while (read(ready[0], &c, 1) == 1) (c == 'J' ? joined : failed)++;
    std::printf("ready %d %d\n", joined, failed);
    std::fflush(stdout);
    while (std::fgetc(stdin) != EOF) {
    }
    close(hold[1]);
    while (wait(nullptr) > 0) {
    }
    return 0;
}
