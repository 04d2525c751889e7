// A plugin that uses oneTBB, for tbb_plugin_host: the host dlopen()s it with RTLD_LOCAL, so this
// plugin's libtbb is invisible to the global symbol scope (as for a Python extension module).
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_reduce.h>

#include <chrono>

extern "C" __attribute__((visibility("default"))) long long plugin_sum(long long n, int item_us) {
    return tbb::parallel_reduce(
        tbb::blocked_range<long long>(0, n, 1), 0LL,
        [item_us](const tbb::blocked_range<long long>& r, long long acc) {
            for (long long i = r.begin(); i < r.end(); ++i) {
                auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(item_us);
                while (std::chrono::steady_clock::now() < end) {
                }
                acc += i % 7;
            }
            return acc;
        },
        [](long long a, long long b) { return a + b; });
}
