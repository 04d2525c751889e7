// loopy n units: Sen §4.2 LOOPY with OpenMP tasks: one thread's loop spawns n equal tasks.
#include <omp.h>

#include "common.hpp"

int main(int argc, char** argv) {
    wl::Args a = wl::parse(argc, argv);
    if (a.threads > 0) omp_set_num_threads(a.threads);
    long n = wl::arg(a, 0, 200), units = wl::arg(a, 1, 5000);
    std::vector<std::uint64_t> out(static_cast<std::size_t>(n));
    wl::Timer t;
#pragma omp parallel
#pragma omp single
    for (long i = 0; i < n; ++i) {
#pragma omp task firstprivate(i)
        out[static_cast<std::size_t>(i)] = wl::busy_units(static_cast<std::uint64_t>(i), units);
    }
    unsigned long long sum = 0;
    for (auto v : out) sum += v % 1000003;
    wl::report("loopy", a, sum, t.seconds());
}
