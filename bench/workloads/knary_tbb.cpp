// knary n k r [units]: Blumofe's knary tree (see knary.hpp) with oneTBB task_groups.
#include <oneapi/tbb/task_group.h>

#include "knary.hpp"
#include "tbb_common.hpp"

static std::uint64_t knary(long n, const KnaryArgs& ka, std::uint64_t id) {
    std::uint64_t v = knary_node_work(id, ka.units);
    if (n <= 1) return v;
    for (long i = 0; i < ka.r; ++i) v += knary(n - 1, ka, knary_child(id, i));  // serial children
    if (ka.r < ka.k) {
        std::uint64_t res[kKnaryMaxK];
        tbb::task_group g;
        for (long i = ka.r; i < ka.k; ++i) g.run([&res, &ka, n, id, i] { res[i] = knary(n - 1, ka, knary_child(id, i)); });
        g.wait();
        for (long i = ka.r; i < ka.k; ++i) v += res[i];
    }
    return v;
}

int main(int argc, char** argv) {
    wl::Args a = wl::parse("knary", argc, argv);
    auto limit = wl::tbb_limit(a);
    KnaryArgs ka = knary_args(a);
    wl::Timer t;
    std::uint64_t sum = a.serial ? knary_serial(ka.n, ka, kKnaryRoot) : knary(ka.n, ka, kKnaryRoot);
    wl::report("knary", {ka.n, ka.k, ka.r, ka.units}, sum, t.seconds());
}
