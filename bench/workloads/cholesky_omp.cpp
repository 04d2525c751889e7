// cholesky n b [--verify]: tiled Cholesky (see cholesky.hpp) with OpenMP tasks and depend
// clauses on the tiles, written as an OpenMP programmer would.
#include <atomic>

#include "cholesky.hpp"
#include "omp_common.hpp"

int main(int argc, char** argv) {
    wl::Args a = wl::parse("cholesky", argc, argv);
    wl::omp_limit(a);
    long n = wl::arg(a, 0, kCholN), b = wl::arg(a, 1, kCholB);
    TiledMatrix m = chol_make(n, b);
    const long nt = m.nt;
    wl::Timer t;
    bool ok = true;
    if (a.serial) {
        ok = chol_serial(m);
    } else {
        std::atomic<bool> good{true};
#pragma omp parallel
#pragma omp single
        for (long k = 0; k < nt; ++k) {
            double* akk = m.tile(k, k);
#pragma omp task depend(inout : akk[0]) shared(good)
            if (!chol_potrf(akk, b)) good.store(false);
            for (long i = k + 1; i < nt; ++i) {
                double* aik = m.tile(i, k);
#pragma omp task depend(in : akk[0]) depend(inout : aik[0])
                chol_trsm(akk, aik, b);
            }
            for (long i = k + 1; i < nt; ++i) {
                double* aik = m.tile(i, k);
                double* aii = m.tile(i, i);
#pragma omp task depend(in : aik[0]) depend(inout : aii[0])
                chol_syrk(aik, aii, b);
                for (long j = k + 1; j < i; ++j) {
                    double* ajk = m.tile(j, k);
                    double* aij = m.tile(i, j);
#pragma omp task depend(in : aik[0], ajk[0]) depend(inout : aij[0])
                    chol_gemm(aik, ajk, aij, b);
                }
            }
        }
        ok = good.load();
    }
    double secs = t.seconds();
    chol_check(m, ok, a.verify);
    wl::report("cholesky", {n, b}, chol_checksum(m), secs);
}
