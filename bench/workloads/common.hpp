// Shared by every workload: arguments, the busy-work unit, timing, the one output line.
// Each workload exists for oneTBB and OpenMP with the same arguments and the same checksum;
// see README.md in this folder.
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
    int threads = 0;                  // --threads N: the static-split baseline; 0 = the runtime's default
    std::string schedule = "dynamic"; // --schedule static|dynamic (pfor)
    bool serial = false;              // --serial: the same computation without the runtime (T1 reference)
    bool reverse = false;             // --reverse (phases: parallel phase first)
    bool verify = false;              // --verify (cholesky: compare with a serial reference run)
};

[[noreturn]] inline void die(const char* name, const std::string& why) {
    std::fprintf(stderr, "%s: %s\n", name, why.c_str());
    std::exit(2);
}

inline Args parse(const char* name, int argc, char** argv) {
    Args a;
    for (int i = 1; i < argc; ++i) {
        std::string s = argv[i];
        if (s == "--threads" && i + 1 < argc) a.threads = std::atoi(argv[++i]);
        else if (s == "--schedule" && i + 1 < argc) a.schedule = argv[++i];
        else if (s == "--serial") a.serial = true;
        else if (s == "--reverse") a.reverse = true;
        else if (s == "--verify") a.verify = true;
        else if (s.size() > 1 && s[0] == '-' && !(s[1] >= '0' && s[1] <= '9')) die(name, "unknown option " + s);
        else a.positional.push_back(s);
    }
    if (a.schedule != "static" && a.schedule != "dynamic") die(name, "--schedule static|dynamic");
    return a;
}

// Positional argument i, or the default; every program reports the values it used.
inline long arg(const Args& a, std::size_t i, long fallback) {
    return i < a.positional.size() ? std::atol(a.positional[i].c_str()) : fallback;
}

// One busy unit: a dependent chain of xorshift steps, about 1 microsecond on a ~3 GHz x86-64
// core (540 iterations x 6 dependent integer ops ~ 3200 cycles; measured 1.0 us on the
// development machine). CPU-bound, deterministic, not optimised away, independent of memory.
inline constexpr int kUnitIterations = 540;

inline std::uint64_t busy_units(std::uint64_t seed, long units) {
    std::uint64_t x = seed | 1;
    for (long u = 0; u < units; ++u)
        for (int k = 0; k < kUnitIterations; ++k) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
    return x;
}

// A well-mixed 64-bit hash (splitmix64 finaliser), for seeds and generated inputs.
inline std::uint64_t mix(std::uint64_t z) {
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

class Timer {
public:
    double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count(); }

private:
    std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
};

// The one stdout line: `<name> <effective args> checksum=<c> time_s=<t>`. Options (--threads,
// --schedule, --serial, --verify) are not echoed: they must not change the checksum.
inline void report(const char* name, const std::vector<long>& args, unsigned long long checksum, double secs) {
    std::string s;
    for (long v : args) {  // appended piecewise: GCC 12 -O3 flags "..." + std::string (-Wrestrict)
        s += ' ';
        s += std::to_string(v);
    }
    std::printf("%s%s checksum=%llu time_s=%.4f\n", name, s.c_str(), checksum, secs);
    std::fflush(stdout);
}

}  // namespace wl
