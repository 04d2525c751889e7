// knary n k r [units]: Blumofe's knary tree (see knary.hpp) with OpenMP tasks.
#include "knary.hpp"
#include "omp_common.hpp"

static std::uint64_t knary(long n, const KnaryArgs& ka, std::uint64_t id) {
    std::uint64_t v = knary_node_work(id, ka.units);
    if (n <= 1) return v;
    for (long i = 0; i < ka.r; ++i) v += knary(n - 1, ka, knary_child(id, i));  // serial children
    if (ka.r < ka.k) {
        std::uint64_t res[kKnaryMaxK];
        for (long i = ka.r; i < ka.k; ++i) {
#pragma omp task shared(res, ka) firstprivate(i, n, id)
            res[i] = knary(n - 1, ka, knary_child(id, i));
        }
#pragma omp taskwait
        for (long i = ka.r; i < ka.k; ++i) v += res[i];
    }
    return v;
}

int main(int argc, char** argv) {
    wl::Args a = wl::parse("knary", argc, argv);
    wl::omp_limit(a);
    KnaryArgs ka = knary_args(a);
    wl::Timer t;
    std::uint64_t sum = 0;
    if (a.serial) {
        sum = knary_serial(ka.n, ka, kKnaryRoot);
    } else {
#pragma omp parallel
#pragma omp single
        sum = knary(ka.n, ka, kKnaryRoot);
    }
    wl::report("knary", {ka.n, ka.k, ka.r, ka.units}, sum, t.seconds());
}
