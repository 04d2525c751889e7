// pfor n reps [--schedule static|dynamic]: a parallel-for kernel over n doubles, repeated reps
// times (OpenMP; dynamic schedule in chunks of 4096 by default).
#include <omp.h>

#include "common.hpp"
#include "pfor_kernel.hpp"

int main(int argc, char** argv) {
    wl::Args a = wl::parse(argc, argv);
    if (a.threads > 0) omp_set_num_threads(a.threads);
    long n = wl::arg(a, 0, 2000000), reps = wl::arg(a, 1, 50);
    bool dynamic = a.schedule != "static";
    std::vector<double> x(static_cast<std::size_t>(n)), y(static_cast<std::size_t>(n));
    wl::Timer t;
    for (long r = 0; r < reps; ++r) {
        if (dynamic) {
#pragma omp parallel for schedule(dynamic, 4096)
            for (long i = 0; i < n; ++i) pfor_element(x, y, i, r);
        } else {
#pragma omp parallel for schedule(static)
            for (long i = 0; i < n; ++i) pfor_element(x, y, i, r);
        }
    }
    wl::report("pfor", a, pfor_checksum(x), t.seconds());
}
