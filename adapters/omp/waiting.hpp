// How long an OpenMP runtime's idle threads spin before they sleep, as the job's situation asks:
// one rule for both runtimes, carried out as libgomp's spin counts (gomp_spin.cpp, from the
// controller's cycle) and libomp's blocktime (kmp_hooks.cpp, at outermost forks and barriers).
#pragma once

#include "adapters/adapter.hpp"

namespace apshim::omp_adapter {

enum class Waiting {
    // Not at all: confinement has the job's threads share CPUs, and a spinning thread keeps the
    // very teammate it waits for off the CPU.
    none,
    // The shim's short default (libgomp 1000 rounds, libomp 1 ms: omp_env.cpp): a co-runner wants
    // more processors (or none is known not to yet), so an idle thread gives its CPU back soon.
    shim,
    // The runtime's own (libgomp 300 000 rounds, libomp 200 ms): nobody waits for the job's CPUs,
    // and a program with serial code between its regions should not sleep and wake its team at
    // each one (IQ-TREE takes 1.17x its time with 1000 rounds; a clang program of regions 2 ms
    // apart 1.09x with a 1 ms blocktime: docs/enforcement.md, twenty-eighth session).
    runtime,
};

// Two atomic loads (Host); any thread.
inline Waiting waiting_now() noexcept {
    if (host().confined()) return Waiting::none;
    return host().others_want_more() ? Waiting::shim : Waiting::runtime;
}

}  // namespace apshim::omp_adapter
