// pfor n reps [--schedule dynamic|static]: a parallel-for kernel (see pfor.hpp) with OpenMP
// worksharing loops: schedule(dynamic, kPforChunk) or schedule(static).
#include "omp_common.hpp"
#include "pfor.hpp"

int main(int argc, char** argv) {
    wl::Args a = wl::parse("pfor", argc, argv);
    wl::omp_limit(a);
    long n = wl::arg(a, 0, kPforN), reps = wl::arg(a, 1, kPforReps);
    std::vector<double> x(static_cast<std::size_t>(n)), y(static_cast<std::size_t>(n));
    wl::Timer t;
    for (long r = 0; r < reps; ++r) {
        if (a.serial) {
            for (long i = 0; i < n; ++i) pfor_element(x, y, i, r);
        } else if (a.schedule == "static") {
#pragma omp parallel for schedule(static)
            for (long i = 0; i < n; ++i) pfor_element(x, y, i, r);
        } else {
#pragma omp parallel for schedule(dynamic, kPforChunk)
            for (long i = 0; i < n; ++i) pfor_element(x, y, i, r);
        }
    }
    wl::report("pfor", {n, reps}, pfor_checksum(x), t.seconds());
}
