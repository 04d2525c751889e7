// phases s p reps [--reverse]: Sen's P2 serial/parallel phases (see phases.hpp), the parallel
// phase as an OpenMP loop with schedule(dynamic, 1) over the tasks.
#include "omp_common.hpp"
#include "phases.hpp"

int main(int argc, char** argv) {
    wl::Args a = wl::parse("phases", argc, argv);
    wl::omp_limit(a);
    PhasesArgs pa = phases_args(a);
    wl::Timer t;
    unsigned long long sum = phases_run(pa, a.reverse, [&](std::vector<std::uint64_t>& out, long r) {
        if (a.serial) {
            for (long i = 0; i < pa.tasks; ++i) out[static_cast<std::size_t>(i)] = phases_task(r, i, pa.task_units);
        } else {
#pragma omp parallel for schedule(dynamic, 1)
            for (long i = 0; i < pa.tasks; ++i) out[static_cast<std::size_t>(i)] = phases_task(r, i, pa.task_units);
        }
    });
    wl::report(a.reverse ? "phases-reverse" : "phases", pa.echo, sum, t.seconds());
}
