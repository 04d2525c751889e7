// pfor n reps: a parallel-for kernel over n doubles, repeated reps times (oneTBB parallel_for).
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>

#include <cmath>
#include <memory>

#include "common.hpp"
#include "pfor_kernel.hpp"

int main(int argc, char** argv) {
    wl::Args a = wl::parse(argc, argv);
    std::unique_ptr<tbb::global_control> limit;
    if (a.threads > 0) limit = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism, a.threads);
    long n = wl::arg(a, 0, 2000000), reps = wl::arg(a, 1, 50);
    std::vector<double> x(static_cast<std::size_t>(n)), y(static_cast<std::size_t>(n));
    wl::Timer t;
    for (long r = 0; r < reps; ++r) {
        tbb::parallel_for(tbb::blocked_range<long>(0, n, 4096), [&](const tbb::blocked_range<long>& b) {
            for (long i = b.begin(); i < b.end(); ++i) pfor_element(x, y, i, r);
        });
    }
    wl::report("pfor", a, pfor_checksum(x), t.seconds());
}
