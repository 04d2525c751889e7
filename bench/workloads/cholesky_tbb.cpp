// cholesky n b [--verify]: tiled Cholesky (see cholesky.hpp) on oneTBB: the tile kernels' task
// graph is built from their in/inout tiles (the same rule as OpenMP's depend clauses: a reader
// waits for the tile's last writer, a writer for the last writer and all readers since), then run
// in a task_group where each finished task spawns the successors it made ready.
#include <oneapi/tbb/task_group.h>

#include <atomic>
#include <memory>

#include "cholesky.hpp"
#include "tbb_common.hpp"

namespace {

struct Graph {
    std::vector<CholOp> ops;
    std::vector<std::vector<int>> succ;
    std::unique_ptr<std::atomic<int>[]> pending;
    std::vector<int> roots;
};

Graph build(long nt) {
    Graph g;
    g.ops = chol_ops(nt);
    const std::size_t nops = g.ops.size(), ntiles = static_cast<std::size_t>(nt * (nt + 1) / 2);
    g.succ.resize(nops);
    std::vector<int> npred(nops, 0), last_writer(ntiles, -1);
    std::vector<std::vector<int>> readers(ntiles);
    auto edge = [&](int from, int to) { g.succ[static_cast<std::size_t>(from)].push_back(to), ++npred[static_cast<std::size_t>(to)]; };
    for (std::size_t v = 0; v < nops; ++v) {
        const CholOp& op = g.ops[v];
        const int id = static_cast<int>(v);
        long in[2][2];
        int nin = chol_inputs(op, in);
        for (int r = 0; r < nin; ++r) {
            auto t = static_cast<std::size_t>(TiledMatrix::index(in[r][0], in[r][1]));
            if (last_writer[t] >= 0) edge(last_writer[t], id);
            readers[t].push_back(id);
        }
        auto t = static_cast<std::size_t>(TiledMatrix::index(op.i, op.j));
        if (last_writer[t] >= 0) edge(last_writer[t], id);
        for (int r : readers[t]) edge(r, id);
        readers[t].clear();
        last_writer[t] = id;
    }
    g.pending = std::make_unique<std::atomic<int>[]>(nops);
    for (std::size_t v = 0; v < nops; ++v) {
        g.pending[v].store(npred[v], std::memory_order_relaxed);
        if (npred[v] == 0) g.roots.push_back(static_cast<int>(v));
    }
    return g;
}

struct Runner {
    TiledMatrix& m;
    Graph& g;
    tbb::task_group& tg;
    std::atomic<bool>& ok;
    void operator()(int v) const {
        if (!chol_run(m, g.ops[static_cast<std::size_t>(v)])) ok.store(false);
        for (int s : g.succ[static_cast<std::size_t>(v)])
            if (g.pending[static_cast<std::size_t>(s)].fetch_sub(1, std::memory_order_acq_rel) == 1) tg.run([r = *this, s] { r(s); });
    }
};

}  // namespace

int main(int argc, char** argv) {
    wl::Args a = wl::parse("cholesky", argc, argv);
    auto limit = wl::tbb_limit(a);
    long n = wl::arg(a, 0, kCholN), b = wl::arg(a, 1, kCholB);
    TiledMatrix m = chol_make(n, b);
    wl::Timer t;
    bool ok = true;
    if (a.serial) {
        ok = chol_serial(m);
    } else {
        Graph g = build(m.nt);
        std::atomic<bool> good{true};
        tbb::task_group tg;
        Runner run{m, g, tg, good};
        for (int v : g.roots) tg.run([run, v] { run(v); });
        tg.wait();
        ok = good.load();
    }
    double secs = t.seconds();
    chol_check(m, ok, a.verify);
    wl::report("cholesky", {n, b}, chol_checksum(m), secs);
}
