// phases s p reps [--reverse]: Sen's P2 serial/parallel phases (see phases.hpp), the parallel
// phase as a oneTBB parallel_for over the tasks.
#include <oneapi/tbb/parallel_for.h>

#include "phases.hpp"
#include "tbb_common.hpp"

int main(int argc, char** argv) {
    wl::Args a = wl::parse("phases", argc, argv);
    auto limit = wl::tbb_limit(a);
    PhasesArgs pa = phases_args(a);
    wl::Timer t;
    unsigned long long sum = phases_run(pa, a.reverse, [&](std::vector<std::uint64_t>& out, long r) {
        if (a.serial) {
            for (long i = 0; i < pa.tasks; ++i) out[static_cast<std::size_t>(i)] = phases_task(r, i, pa.task_units);
        } else {
            tbb::parallel_for(0L, pa.tasks, [&](long i) { out[static_cast<std::size_t>(i)] = phases_task(r, i, pa.task_units); });
        }
    });
    wl::report(a.reverse ? "phases-reverse" : "phases", pa.echo, sum, t.seconds());
}
