// A oneTBB flow graph whose nodes hand their successor to the same thread as a bypass task
// (oneTBB returns it from task::execute): the worker that finishes a node already holds the
// next one when TBB reports the task's end. A shim that parks that worker there holds the
// graph's only runnable task hostage (regression test for tests/tbb/test_flow_graph.py).
//   tbb_graph ROUNDS CHAINS LENGTH NODE_US
// Each round runs CHAINS independent serial chains of LENGTH continue_nodes (NODE_US of busy
// work each) and waits for the graph. stdout: "tbb_graph ... nodes=<n>" (the count of node
// bodies run, independent of threads and timing).
#include <oneapi/tbb/flow_graph.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

namespace {

void spin_us(int us) {
    auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
    while (std::chrono::steady_clock::now() < end) {
    }
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 5) {
        std::fprintf(stderr, "usage: tbb_graph ROUNDS CHAINS LENGTH NODE_US\n");
        return 2;
    }
    int rounds = std::atoi(argv[1]), chains = std::atoi(argv[2]), length = std::atoi(argv[3]), node_us = std::atoi(argv[4]);
    using Node = tbb::flow::continue_node<tbb::flow::continue_msg>;
    std::atomic<long> nodes{0};
    for (int r = 0; r < rounds; ++r) {
        tbb::flow::graph g;
        tbb::flow::broadcast_node<tbb::flow::continue_msg> start(g);
        std::vector<std::unique_ptr<Node>> all;
        for (int c = 0; c < chains; ++c) {
            for (int i = 0; i < length; ++i) {
                all.push_back(std::make_unique<Node>(g, [&](const tbb::flow::continue_msg&) {
                    spin_us(node_us);
                    nodes.fetch_add(1, std::memory_order_relaxed);
                    return tbb::flow::continue_msg();
                }));
                if (i == 0)
                    tbb::flow::make_edge(start, *all.back());
                else
                    tbb::flow::make_edge(*all[all.size() - 2], *all.back());
            }
        }
        start.try_put(tbb::flow::continue_msg());
        g.wait_for_all();
    }
    std::printf("tbb_graph %d %d %d nodes=%ld\n", rounds, chains, length, nodes.load());
    return 0;
}
