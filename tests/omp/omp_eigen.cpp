// A program of one's own built from source with Eigen (Debian's libeigen3-dev, 3.4) and -fopenmp:
// Eigen's parallel matrix products (Eigen::internal::parallelize_gemm) in an executable that
// exports none of its functions and is not stripped, the case the shim tells by the file's full
// symbol table (adapters/common/elf_symtab.hpp). PRODUCTS products of two N x N matrices of small
// integers (exact in double whatever the order of the sums, so the checksum is the same at any
// team size), each fed into the next. Nothing in it knows the shim.
//   omp_eigen N PRODUCTS
// stdout: "omp_eigen n=<N> products=<P> checksum=<c> max_threads=<m>"
#include <omp.h>

#include <Eigen/Dense>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: omp_eigen N PRODUCTS\n");
        return 2;
    }
    const int n = std::atoi(argv[1]), products = std::atoi(argv[2]);
    if (n < 8 || n > 4000 || products < 1 || products > 1000) {
        std::fprintf(stderr, "omp_eigen: N in 8..4000, PRODUCTS in 1..1000\n");
        return 2;
    }
    Eigen::MatrixXd a(n, n), b(n, n), c(n, n);
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) {
            a(i, j) = static_cast<double>((i * 7 + j * 3) % 5 - 2);
            b(i, j) = static_cast<double>((i * 5 + j * 11) % 3 - 1);
        }
    std::uint64_t checksum = 0;
    for (int p = 0; p < products; ++p) {
        c.noalias() = a * b;
        // Back to small integers for the next product: every sum stays exact.
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < n; ++i) {
                const auto v = static_cast<std::int64_t>(c(i, j));
                checksum = checksum * 31 + static_cast<std::uint64_t>(v);
                b(i, j) = static_cast<double>(((v + i + j) % 3 + 3) % 3 - 1);
            }
    }
    std::printf("omp_eigen n=%d products=%d checksum=%llu max_threads=%d\n", n, products,
                static_cast<unsigned long long>(checksum), omp_get_max_threads());
    return 0;
}
