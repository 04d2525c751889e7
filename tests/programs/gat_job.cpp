// A stand-in job that uses the table directly, without any runtime: joins with a desire,
// updates every est_cycle (like a controller would; at least every 250 ms, so that a long
// est_cycle never makes it look stale: the table counts a job silent for 1 s as away, holding no
// processor), and prints its final allotment.
// Used by the CLI tests and the GAT demo. SIGTERM ends it as a job's normal exit does: it leaves
// the table (a shim job's controller leaves at exit), so its co-runners are told at once.
//   gat_job DESIRE MILLISECONDS      (APSHIM_GAT, APSHIM_P, APSHIM_EST_CYCLE_MS from the environment)
#include <signal.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "gat/table.hpp"
#include "shim/options.hpp"

extern char** environ;

namespace {
volatile sig_atomic_t g_stop = 0;
void on_term(int) { g_stop = 1; }
}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: gat_job DESIRE MILLISECONDS\n");
        return 2;
    }
    int desire = std::atoi(argv[1]);
    double ms = std::atof(argv[2]);
    apshim::Options o = apshim::parse_options(environ, [](const char* line) { std::fprintf(stderr, "%s\n", line); });
    std::string err;
    auto t = apshim::gat::Table::open(o.gat, {o.P, static_cast<std::uint32_t>(std::lround(o.est_cycle_ms * 1000))}, err);
    if (!t) {
        std::fprintf(stderr, "gat_job: %s\n", err.c_str());
        return 1;
    }
    // Before joining: a test that sees the join's effect may send SIGTERM at once, and before the
    // handler the default action killed us without leaving, so our row stayed until a scan found
    // the dead pid (omp.clang.follow, once under ASan: the job kept one CPU for 8 s).
    struct sigaction sa {};
    sa.sa_handler = &on_term;
    sigaction(SIGTERM, &sa, nullptr);  // no SA_RESTART: the nap ends at once
    int slot = t->join(desire, o.eta, err);
    if (slot < 0) {
        std::fprintf(stderr, "gat_job: %s\n", err.c_str());
        return 1;
    }
    int allot = 0;
    const long cycle_ns = std::min(std::lround(t->est_cycle_ms() * 1e6), 250000000l);
    timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    do {
        int a = t->update(slot, desire, allot > 0 ? allot : 1, 1000000000ull);
        if (a > 0) allot = a;
        timespec nap{cycle_ns / 1000000000, cycle_ns % 1000000000};
        nanosleep(&nap, nullptr);
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while (!g_stop && (now.tv_sec - start.tv_sec) * 1e3 + (now.tv_nsec - start.tv_nsec) / 1e6 < ms);
    t->leave(slot);
    std::printf("allotment=%d\n", allot);
    return 0;
}
