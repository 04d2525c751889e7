// pfor n reps [--schedule dynamic|static]: a parallel-for kernel (see pfor.hpp) with oneTBB
// parallel_for: dynamic = auto_partitioner over grain kPforChunk, static = static_partitioner.
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/partitioner.h>

#include "pfor.hpp"
#include "tbb_common.hpp"

int main(int argc, char** argv) {
    wl::Args a = wl::parse("pfor", argc, argv);
    auto limit = wl::tbb_limit(a);
    long n = wl::arg(a, 0, kPforN), reps = wl::arg(a, 1, kPforReps);
    std::vector<double> x(static_cast<std::size_t>(n)), y(static_cast<std::size_t>(n));
    wl::Timer t;
    for (long r = 0; r < reps; ++r) {
        auto body = [&x, &y, r](const tbb::blocked_range<long>& b) {
            for (long i = b.begin(); i < b.end(); ++i) pfor_element(x, y, i, r);
        };
        if (a.serial) {
            for (long i = 0; i < n; ++i) pfor_element(x, y, i, r);
        } else if (a.schedule == "static") {
            tbb::parallel_for(tbb::blocked_range<long>(0, n, kPforChunk), body, tbb::static_partitioner());
        } else {
            tbb::parallel_for(tbb::blocked_range<long>(0, n, kPforChunk), body, tbb::auto_partitioner());
        }
    }
    wl::report("pfor", {n, reps}, pfor_checksum(x), t.seconds());
}
