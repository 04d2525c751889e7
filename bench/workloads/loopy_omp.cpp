// loopy n [work]: Sen §4.2 LOOPY with OpenMP tasks from one thread's loop (see loopy.hpp).
#include "loopy.hpp"
#include "omp_common.hpp"

int main(int argc, char** argv) {
    wl::Args a = wl::parse("loopy", argc, argv);
    wl::omp_limit(a);
    long n = wl::arg(a, 0, kLoopyN), work = wl::arg(a, 1, kLoopyWork);
    std::vector<std::uint64_t> out(static_cast<std::size_t>(n));
    wl::Timer t;
    if (a.serial) {
        for (long i = 0; i < n; ++i) out[static_cast<std::size_t>(i)] = loopy_task(i, work);
    } else {
#pragma omp parallel
#pragma omp single
        {
            for (long i = 0; i < n; ++i) {
#pragma omp task firstprivate(i) shared(out, work)
                out[static_cast<std::size_t>(i)] = loopy_task(i, work);
            }
#pragma omp taskwait
        }
    }
    wl::report("loopy", {n, work}, loopy_checksum(out), t.seconds());
}
