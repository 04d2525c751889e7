// Shared by every workload: arguments, the busy-work unit, timing, the one output line.
// Each workload exists for oneTBB and OpenMP with the same arguments and the same checksum.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace wl {

struct Args {
    std::vector<std::string> positional;
    int threads = 0;  // --threads N: the static-split baseline; 0 = the runtime's default
    std::string schedule = "dynamic";
};

inline Args parse(int argc, char** argv) {
    Args a;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) a.threads = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--schedule") && i + 1 < argc) a.schedule = argv[++i];
        else a.positional.emplace_back(argv[i]);
    }
    return a;
}

inline long arg(const Args& a, std::size_t i, long fallback) {
    return i < a.positional.size() ? std::atol(a.positional[i].c_str()) : fallback;
}

// About one microsecond of integer arithmetic per unit (calibrated on x86-64 at ~3 GHz; the
// exact speed does not matter, only that work is CPU-bound, deterministic and not optimised away).
inline std::uint64_t busy_units(std::uint64_t seed, long units) {
    std::uint64_t x = seed | 1;
    for (long u = 0; u < units; ++u)
        for (int k = 0; k < 300; ++k) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
    return x;
}

class Timer {
public:
    double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count(); }

private:
    std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
};

inline void report(const char* name, const Args& a, unsigned long long checksum, double secs) {
    std::string args;
    for (const auto& p : a.positional) args += " " + p;
    std::printf("%s%s checksum=%llu time_s=%.4f\n", name, args.c_str(), checksum, secs);
}

}  // namespace wl
