// loopy n units: Sen §4.2 LOOPY: a serial loop spawning n equal independent tasks of `units`
// busy units each (oneTBB task_group), then waiting. T1 = n*units, T_inf ~ n + units.
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_group.h>

#include <atomic>
#include <memory>

#include "common.hpp"

int main(int argc, char** argv) {
    wl::Args a = wl::parse(argc, argv);
    std::unique_ptr<tbb::global_control> limit;
    if (a.threads > 0) limit = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism, a.threads);
    long n = wl::arg(a, 0, 200), units = wl::arg(a, 1, 5000);
    std::vector<std::uint64_t> out(static_cast<std::size_t>(n));
    wl::Timer t;
    tbb::task_group g;
    for (long i = 0; i < n; ++i) g.run([&, i] { out[static_cast<std::size_t>(i)] = wl::busy_units(static_cast<std::uint64_t>(i), units); });
    g.wait();
    unsigned long long sum = 0;
    for (auto v : out) sum += v % 1000003;
    wl::report("loopy", a, sum, t.seconds());
}
