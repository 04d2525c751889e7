// OpenMP loops started from several threads at once, as when an application calls an OpenMP
// library from its own parallel code. MODE tbb: a oneTBB parallel_for whose body runs the
// OpenMP loop (one process, two runtimes). MODE threads: four std::threads of the program each
// run it. Built with g++ -fopenmp (libgomp) and with clang++ -fopenmp (libomp).
//
// Usage: mixed_nested tbb|threads ROUNDS ITEMS ITERS WORK
// Prints the checksum on stdout; on stderr, the most threads seen inside the OpenMP loop body at
// once after the first quarter of the rounds ("peak N"), which the shim must keep within the
// process's allotment plus one master per extra runtime.
#include <omp.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

std::atomic<int> inside{0};
std::atomic<int> peak{0};
std::atomic<bool> measuring{false};

int g_work = 40000;  // steps of one loop iteration (40000: about 70 microseconds)

std::uint64_t work(int i, int j) {
    std::uint64_t x = static_cast<std::uint64_t>(i) * 1000003u + static_cast<std::uint64_t>(j) + 1;
    for (int k = 0; k < g_work; ++k) {  // xorshift: no closed form a compiler could take
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    return x >> 33;
}

std::uint64_t body(int i, int iters) {
    std::uint64_t sum = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : sum)
    for (int j = 0; j < iters; ++j) {
        int now = inside.fetch_add(1) + 1;
        if (measuring.load(std::memory_order_relaxed)) {
            int seen = peak.load();
            while (now > seen && !peak.compare_exchange_weak(seen, now)) {
            }
        }
        sum += work(i, j);
        inside.fetch_sub(1);
    }
    return sum;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 6) {
        std::fprintf(stderr, "usage: %s tbb|threads ROUNDS ITEMS ITERS WORK\n", argv[0]);
        return 2;
    }
    std::string mode = argv[1];
    int rounds = std::atoi(argv[2]), items = std::atoi(argv[3]), iters = std::atoi(argv[4]);
    g_work = std::atoi(argv[5]);
    std::uint64_t checksum = 0;
    std::vector<std::uint64_t> partial(static_cast<std::size_t>(items));
    for (int r = 0; r < rounds; ++r) {
        if (r == rounds / 4) measuring = true;
        if (mode == "tbb") {
            tbb::parallel_for(tbb::blocked_range<int>(0, items, 1), [&](const tbb::blocked_range<int>& range) {
                for (int i = range.begin(); i != range.end(); ++i) partial[static_cast<std::size_t>(i)] = body(i + r, iters);
            });
        } else {
            constexpr int kThreads = 4;
            std::vector<std::thread> threads;
            for (int t = 0; t < kThreads; ++t)
                threads.emplace_back([&, t] {
                    for (int i = t; i < items; i += kThreads) partial[static_cast<std::size_t>(i)] = body(i + r, iters);
                });
            for (auto& th : threads) th.join();
        }
        for (std::uint64_t v : partial) checksum = checksum * 31 + v;
    }
    std::printf("checksum %llu\n", static_cast<unsigned long long>(checksum));
    std::fprintf(stderr, "peak %d\n", peak.load());
    return 0;
}
