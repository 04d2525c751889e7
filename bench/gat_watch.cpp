// Watches one job's row of the table and prints each change of its desire or allotment with the
// time it was seen (CLOCK_MONOTONIC seconds, the clock Python's time.monotonic() reads), so that
// bench/scripts/reaction.py can time the shim's reactions against the program's own phases.
// Polls every 200 us through Table::snapshot() (the table's lock, held for microseconds).
//   gat_watch PID SECONDS     (APSHIM_GAT from the environment)
// stdout: "t_s,desire,allotment" rows, the first when the row is first seen; ends when the job's
// row is gone for good (the job left) or after SECONDS.
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "adapters/common/clock.hpp"
#include "gat/table.hpp"
#include "shim/options.hpp"

extern char** environ;

using apshim::now_s;

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: gat_watch PID SECONDS\n");
        return 2;
    }
    int pid = std::atoi(argv[1]);
    double until = now_s() + std::atof(argv[2]);
    apshim::Options o = apshim::parse_options(environ, [](const char* line) { std::fprintf(stderr, "%s\n", line); });
    std::string err;
    auto t = apshim::gat::Table::open(o.gat, {o.P, 5000}, err, apshim::gat::Table::Mode::existing_only);
    if (!t) {
        std::fprintf(stderr, "gat_watch: %s\n", err.c_str());
        return 1;
    }
    int desire = -1, allotment = -1;
    bool seen = false;
    std::printf("t_s,desire,allotment\n");
    while (now_s() < until) {
        apshim::gat::Snapshot snap = t->snapshot();
        bool found = false;
        for (const auto& j : snap.jobs) {
            if (j.pid != pid) continue;
            found = true;
            if (j.desire != desire || j.allotment != allotment) {
                desire = j.desire;
                allotment = j.allotment;
                std::printf("%.6f,%d,%d\n", now_s(), desire, allotment);
                std::fflush(stdout);
            }
        }
        if (seen && !found) break;
        seen = seen || found;
        timespec nap{0, 200000};
        nanosleep(&nap, nullptr);
    }
    return 0;
}
