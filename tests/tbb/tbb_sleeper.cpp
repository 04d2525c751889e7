// A task that sleeps in user code for work that only another thread brings: in each of ROUNDS
// rounds the main thread, inside a task, enqueues a chain of STEPS tasks (each step enqueues the
// next) and sleeps until the chain is done. A worker runs the steps, each an outermost task of
// its own, so it may park after every one; the sleeping main thread reads busy (it is inside a
// task), so only the CPU escape lets the worker go on (adapters/tbb/task_hooks.cpp).
// With one thread (natively under taskset) the main thread runs the chain itself.
// No round begins after 10 s: a crawling run ends with fewer rounds than asked.
//   tbb_sleeper ROUNDS STEPS LONG_MS   stdout: "rounds R long K" (R: rounds run, K: of LONG_MS or more)
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace {

volatile long sink;

void work() {
    unsigned long x = 1;
    for (int i = 0; i < 20000; ++i) x = x * 6364136223846793005ul + 1442695040888963407ul;  // about 20 us
    sink = static_cast<long>(x);
}

void step(std::atomic<long>& done, long steps) {
    work();
    if (done.fetch_add(1) + 1 < steps) tbb::this_task_arena::enqueue([&done, steps] { step(done, steps); });
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: tbb_sleeper ROUNDS STEPS LONG_MS\n");
        return 2;
    }
    const long rounds = std::atol(argv[1]), steps = std::atol(argv[2]);
    const auto long_round = std::chrono::milliseconds(std::atol(argv[3]));
    const bool alone = tbb::this_task_arena::max_concurrency() == 1;
    long long_rounds = 0, r = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    for (; r < rounds && std::chrono::steady_clock::now() < deadline; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        std::atomic<long> done{0};
        tbb::task_group g;
        g.run_and_wait([&] {
            if (alone) {
                for (long i = 0; i < steps; ++i) work();
                done = steps;
                return;
            }
            tbb::this_task_arena::enqueue([&done, steps] { step(done, steps); });
            while (done.load() < steps) std::this_thread::sleep_for(std::chrono::microseconds(50));
        });
        if (std::chrono::steady_clock::now() - t0 >= long_round) ++long_rounds;
    }
    std::printf("rounds %ld long %ld\n", r, long_rounds);
    return 0;
}
