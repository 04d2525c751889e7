// cholesky: shared by cholesky_tbb.cpp and cholesky_omp.cpp. Tiled right-looking Cholesky
// factorisation A = L L^T of a dense n x n symmetric positive-definite matrix in b x b tiles
// (nt = n/b tiles a side; only the lower tiles are stored, each contiguous, row-major).
// Program order of the tile kernels (the task graph; in/inout on whole tiles):
//   for k: POTRF(k,k)                      inout A[k][k]
//          for i > k: TRSM(i,k)            in A[k][k],            inout A[i][k]
//          for i > k: SYRK(i,k)            in A[i][k],            inout A[i][i]
//                     for k < j < i: GEMM  in A[i][k], A[j][k],   inout A[i][j]
// Every tile's writers form a chain in program order, so any schedule that respects the
// dependencies performs exactly the serial sequence of floating-point operations on each tile:
// the result is bit-identical to the serial run, and the checksum is a hash of its bits.
//   T1 ~ n^3/6 multiply-adds (n^3/3 flops): nt^3/6 GEMMs of b^3, nt^2/2 SYRKs and TRSMs of b^3/2;
//   T_inf ~ nt steps of POTRF -> TRSM -> SYRK (b^3/6 + b^3/2 + b^3/2; with a GEMM on the chain up
//   to ~5b^3/3) ~ 1.2..1.7 * nt * b^3 multiply-adds, so the parallelism T1/T_inf ~ nt^2/10..nt^2/7.
// The input: A[i][j] = a hash-derived value in [-0.5, 0.5) off the diagonal, n on it
// (symmetric, strictly diagonally dominant, hence SPD).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "common.hpp"

inline constexpr long kCholN = 4096, kCholB = 64;  // T1 ~ 11 G multiply-adds ~ 2 s

struct TiledMatrix {
    long n = 0, b = 0, nt = 0;
    std::vector<double> data;
    static long index(long i, long j) { return i * (i + 1) / 2 + j; }  // tile (i,j), j <= i
    double* tile(long i, long j) { return &data[static_cast<std::size_t>(index(i, j) * b * b)]; }
    const double* tile(long i, long j) const { return &data[static_cast<std::size_t>(index(i, j) * b * b)]; }
    double at(long gi, long gj) const { return tile(gi / b, gj / b)[(gi % b) * b + gj % b]; }  // gj <= gi
};

inline double chol_input(long n, long gi, long gj) {
    if (gi == gj) return static_cast<double>(n);
    std::uint64_t lo = static_cast<std::uint64_t>(gi < gj ? gi : gj), hi = static_cast<std::uint64_t>(gi < gj ? gj : gi);
    return static_cast<double>(wl::mix(lo * static_cast<std::uint64_t>(n) + hi) >> 11) * 0x1.0p-53 - 0.5;
}

inline TiledMatrix chol_make(long n, long b) {
    if (n < 1 || b < 1 || n % b != 0) wl::die("cholesky", "need n >= 1, b >= 1 and b dividing n");
    TiledMatrix m;
    m.n = n, m.b = b, m.nt = n / b;
    m.data.assign(static_cast<std::size_t>(m.nt * (m.nt + 1) / 2 * b * b), 0.0);
    for (long ti = 0; ti < m.nt; ++ti)
        for (long tj = 0; tj <= ti; ++tj) {
            double* t = m.tile(ti, tj);
            for (long r = 0; r < b; ++r)
                for (long c = 0; c < b; ++c) t[r * b + c] = chol_input(n, ti * b + r, tj * b + c);
        }
    return m;
}

// --- the four tile kernels (fixed operation order; no reassociation) ---

inline bool chol_potrf(double* a, long b) {  // a = L (lower), upper part zeroed
    for (long j = 0; j < b; ++j) {
        double d = a[j * b + j];
        for (long p = 0; p < j; ++p) d -= a[j * b + p] * a[j * b + p];
        if (!(d > 0)) return false;
        d = std::sqrt(d);
        a[j * b + j] = d;
        for (long i = j + 1; i < b; ++i) {
            double s = a[i * b + j];
            for (long p = 0; p < j; ++p) s -= a[i * b + p] * a[j * b + p];
            a[i * b + j] = s / d;
            a[j * b + i] = 0.0;
        }
    }
    return true;
}

inline void chol_trsm(const double* l, double* a, long b) {  // a = a * l^-T
    for (long r = 0; r < b; ++r)
        for (long j = 0; j < b; ++j) {
            double s = a[r * b + j];
            for (long p = 0; p < j; ++p) s -= a[r * b + p] * l[j * b + p];
            a[r * b + j] = s / l[j * b + j];
        }
}

// Dot product of two rows with four fixed accumulators (deterministic, and four times faster
// than one dependent chain).
inline double chol_dot(const double* x, const double* y, long b) {
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    long p = 0;
    for (; p + 4 <= b; p += 4) {
        s0 += x[p] * y[p];
        s1 += x[p + 1] * y[p + 1];
        s2 += x[p + 2] * y[p + 2];
        s3 += x[p + 3] * y[p + 3];
    }
    for (; p < b; ++p) s0 += x[p] * y[p];
    return (s0 + s1) + (s2 + s3);
}

inline void chol_syrk(const double* a, double* c, long b) {  // lower(c) -= a * a^T
    for (long r = 0; r < b; ++r)
        for (long q = 0; q <= r; ++q) c[r * b + q] -= chol_dot(a + r * b, a + q * b, b);
}

inline void chol_gemm(const double* a, const double* bt, double* c, long b) {  // c -= a * bt^T
    for (long r = 0; r < b; ++r)
        for (long q = 0; q < b; ++q) c[r * b + q] -= chol_dot(a + r * b, bt + q * b, b);
}

// --- the task graph in program order ---

struct CholOp {
    enum Kind { Potrf, Trsm, Syrk, Gemm } kind;
    long i, j, k;  // the tile written is (i,j); k is the step
};

inline std::vector<CholOp> chol_ops(long nt) {
    std::vector<CholOp> ops;
    for (long k = 0; k < nt; ++k) {
        ops.push_back({CholOp::Potrf, k, k, k});
        for (long i = k + 1; i < nt; ++i) ops.push_back({CholOp::Trsm, i, k, k});
        for (long i = k + 1; i < nt; ++i) {
            ops.push_back({CholOp::Syrk, i, i, k});
            for (long j = k + 1; j < i; ++j) ops.push_back({CholOp::Gemm, i, j, k});
        }
    }
    return ops;
}

// Runs one op; false if the matrix is not positive definite.
inline bool chol_run(TiledMatrix& m, const CholOp& op) {
    switch (op.kind) {
    case CholOp::Potrf: return chol_potrf(m.tile(op.k, op.k), m.b);
    case CholOp::Trsm: chol_trsm(m.tile(op.k, op.k), m.tile(op.i, op.k), m.b); return true;
    case CholOp::Syrk: chol_syrk(m.tile(op.i, op.k), m.tile(op.i, op.i), m.b); return true;
    case CholOp::Gemm: chol_gemm(m.tile(op.i, op.k), m.tile(op.j, op.k), m.tile(op.i, op.j), m.b); return true;
    }
    return false;
}

// The tiles an op reads (besides the one it writes), for building the dependency graph.
inline int chol_inputs(const CholOp& op, long (&in)[2][2]) {
    switch (op.kind) {
    case CholOp::Potrf: return 0;
    case CholOp::Trsm: in[0][0] = op.k, in[0][1] = op.k; return 1;
    case CholOp::Syrk: in[0][0] = op.i, in[0][1] = op.k; return 1;
    case CholOp::Gemm: in[0][0] = op.i, in[0][1] = op.k, in[1][0] = op.j, in[1][1] = op.k; return 2;
    }
    return 0;
}

inline bool chol_serial(TiledMatrix& m) {
    for (const CholOp& op : chol_ops(m.nt))
        if (!chol_run(m, op)) return false;
    return true;
}

// FNV-1a over the bits of every stored element of L.
inline unsigned long long chol_checksum(const TiledMatrix& m) {
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (double v : m.data) {
        std::uint64_t bits;
        std::memcpy(&bits, &v, sizeof bits);
        for (int s = 0; s < 64; s += 8) h = (h ^ ((bits >> s) & 0xff)) * 0x100000001b3ULL;
    }
    return h;
}

// Checks after the timed part (exit status 3 on failure, message on stderr):
//  - always: (L L^T)[i][j] == A[i][j] to 1e-9 relative on the diagonal and n sampled entries (O(n^2));
//  - with --verify: bit-identical to a serial run of the same tiled algorithm on a fresh copy.
inline void chol_check(const TiledMatrix& m, bool ok, bool verify) {
    if (!ok) {
        std::fprintf(stderr, "cholesky: matrix not positive definite (a bug: the input is SPD)\n");
        std::exit(3);
    }
    const long n = m.n, samples = 2 * n;
    for (long s = 0; s < samples; ++s) {
        long gi = static_cast<long>(wl::mix(static_cast<std::uint64_t>(2 * s)) % static_cast<std::uint64_t>(n));
        long gj = static_cast<long>(wl::mix(static_cast<std::uint64_t>(2 * s + 1)) % static_cast<std::uint64_t>(n));
        if (s < n) gj = gi = s;  // every diagonal entry
        if (gj > gi) std::swap(gi, gj);
        double v = 0;
        for (long p = 0; p <= gj; ++p) v += m.at(gi, p) * m.at(gj, p);
        double want = chol_input(n, gi, gj);
        if (!(std::fabs(v - want) <= 1e-9 * static_cast<double>(n))) {
            std::fprintf(stderr, "cholesky: residual check failed at (%ld,%ld): L L^T = %.17g, A = %.17g\n", gi, gj, v, want);
            std::exit(3);
        }
    }
    if (verify) {
        TiledMatrix ref = chol_make(m.n, m.b);
        if (!chol_serial(ref) || ref.data.size() != m.data.size() ||
            std::memcmp(ref.data.data(), m.data.data(), m.data.size() * sizeof(double)) != 0) {
            std::fprintf(stderr, "cholesky: result differs from the serial reference\n");
            std::exit(3);
        }
    }
}
