// phases serial_units tasks task_units reps [--reverse]: Sen's experiment P2 profile: a serial
// phase (serial_units busy units on the main thread) then a parallel phase (tasks x task_units),
// repeated reps times; --reverse starts with the parallel phase.
#include <omp.h>




#include "common.hpp"

int main(int argc, char** argv) {
    wl::Args a = wl::parse(argc, argv);
    bool reverse = false;
    for (auto it = a.positional.begin(); it != a.positional.end();)
        if (*it == "--reverse") reverse = true, it = a.positional.erase(it);
        else ++it;
    if (a.threads > 0) omp_set_num_threads(a.threads);
    long serial = wl::arg(a, 0, 200000), tasks = wl::arg(a, 1, 400), units = wl::arg(a, 2, 1000), reps = wl::arg(a, 3, 2);
    std::vector<std::uint64_t> out(static_cast<std::size_t>(tasks));
    unsigned long long sum = 0;
    wl::Timer t;
    for (long r = 0; r < reps; ++r) {
        for (int phase = 0; phase < 2; ++phase) {
            if ((phase == 0) != reverse) {
                sum += wl::busy_units(static_cast<std::uint64_t>(r), serial) % 1000003;
            } else {
#pragma omp parallel for schedule(dynamic, 1)
                for (long i = 0; i < tasks; ++i) out[static_cast<std::size_t>(i)] = wl::busy_units(static_cast<std::uint64_t>(i + r), units);
                for (auto v : out) sum += v % 1000003;
            }
        }
    }
    wl::report(reverse ? "phases-reverse" : "phases", a, sum, t.seconds());
}
