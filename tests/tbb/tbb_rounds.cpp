// A real oneTBB program for the integration tests: ROUNDS rounds of a parallel_for over ITEMS
// items of busy work (about ITEM_US microseconds each), optionally with serial phases between,
// using TBB's default concurrency (nothing in it knows about the shim).
//   tbb_rounds ROUNDS ITEMS ITEM_US [SERIAL_MS_EVERY_ROUND]
// stdout: one line "tbb_rounds ... checksum=<c> time_s=<t>" (checksum independent of threads).
// stderr: "round <k> threads <m>" per round: the most threads that executed its items at the
// same instant, i.e. the workers actually executing tasks, as the tests count them.
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <atomic>
#include <thread>
#include <vector>

namespace {

// Deterministic busy work; the result feeds the checksum so it cannot be optimised away.
std::uint64_t work(std::uint64_t seed, int us) {
    std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
    std::uint64_t acc = 0;
    for (int i = 0;; ++i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        if ((i & 255) == 0 && std::chrono::steady_clock::now() >= end) break;
    }
    // Only a seed-determined part goes into the result: the spin count depends on speed.
    acc = seed * 2654435761u % 1000003u;
    (void)x;
    return acc;
}

void serial_ms(int ms) {
    auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    volatile std::uint64_t x = 1;
    while (std::chrono::steady_clock::now() < end) x = x * 6364136223846793005ull + 1;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: tbb_rounds ROUNDS ITEMS ITEM_US [SERIAL_MS]\n");
        return 2;
    }
    int rounds = std::atoi(argv[1]), items = std::atoi(argv[2]), item_us = std::atoi(argv[3]);
    int serial = argc > 4 ? std::atoi(argv[4]) : 0;
    // The program's own limit (as a real program would set it), to test that it stays a bound.
    std::unique_ptr<tbb::global_control> own;
    if (const char* l = std::getenv("TBB_ROUNDS_LIMIT"))
        own = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism, std::atoi(l));
    auto t0 = std::chrono::steady_clock::now();
    std::vector<std::uint64_t> out(static_cast<std::size_t>(items));
    std::uint64_t checksum = 0;
    for (int r = 0; r < rounds; ++r) {
        std::atomic<int> now{0}, most{0};
        tbb::parallel_for(0, items, [&](int i) {
            int c = now.fetch_add(1) + 1;
            for (int m = most.load(); c > m && !most.compare_exchange_weak(m, c);) {
            }
            out[static_cast<std::size_t>(i)] = work(static_cast<std::uint64_t>(r) * items + i, item_us);
            now.fetch_sub(1);
        });
        for (std::uint64_t v : out) checksum = checksum * 31 + v;
        std::fprintf(stderr, "round %d threads %d\n", r, most.load());
        if (serial > 0) serial_ms(serial);
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("tbb_rounds %d %d %d checksum=%llu time_s=%.3f\n", rounds, items, item_us,
                static_cast<unsigned long long>(checksum), secs);
    return 0;
}
