// loopy n [work]: Sen §4.2 LOOPY with a oneTBB task_group (see loopy.hpp).
#include <oneapi/tbb/task_group.h>

#include "loopy.hpp"
#include "tbb_common.hpp"

int main(int argc, char** argv) {
    wl::Args a = wl::parse("loopy", argc, argv);
    auto limit = wl::tbb_limit(a);
    long n = wl::arg(a, 0, kLoopyN), work = wl::arg(a, 1, kLoopyWork);
    std::vector<std::uint64_t> out(static_cast<std::size_t>(n));
    wl::Timer t;
    if (a.serial) {
        for (long i = 0; i < n; ++i) out[static_cast<std::size_t>(i)] = loopy_task(i, work);
    } else {
        tbb::task_group g;
        for (long i = 0; i < n; ++i) g.run([&out, i, work] { out[static_cast<std::size_t>(i)] = loopy_task(i, work); });
        g.wait();
    }
    wl::report("loopy", {n, work}, loopy_checksum(out), t.seconds());
}
