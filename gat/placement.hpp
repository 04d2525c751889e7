// Which of the table's P processors each job runs on: disjoint sets, as stable as possible.
//
// DP decides how many processors a job gets (its allotment); placement decides which ones, so
// that the shim can confine the job's threads to exactly that many CPUs (shim/confine.cpp) and
// jobs never share a CPU while their allotments fit in P. Processor indices are in topology
// order (the shim maps index i to the i-th CPU of its machine, sharing caches with i-1 and i+1),
// so "near" indices are near CPUs.
//
// Pure logic on a vector (no shared memory): the table calls it after every DP run.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "gat/layout.hpp"

namespace apshim::gat {

// A set of table processors, as the row stores it: kMaxProcessors bits in 64-bit words, so that
// the table copies and compares whole words under its lock (a bit-by-bit std::bitset copy of 4096
// bits per row per update starved joins under ASan with a dozen jobs hammering the table).
struct ProcSet {
    static constexpr int kWords = kMaxProcessors / 64;
    std::uint64_t words[kWords] = {};

    bool operator[](int i) const noexcept { return (words[i / 64] >> (i % 64)) & 1u; }
    void set(int i) noexcept { words[i / 64] |= std::uint64_t{1} << (i % 64); }
    void reset(int i) noexcept { words[i / 64] &= ~(std::uint64_t{1} << (i % 64)); }
    int count() const noexcept {
        int n = 0;
        for (std::uint64_t w : words) n += __builtin_popcountll(w);
        return n;
    }
    bool any() const noexcept {
        for (std::uint64_t w : words)
            if (w) return true;
        return false;
    }
    ProcSet& operator&=(const ProcSet& o) noexcept {
        for (int k = 0; k < kWords; ++k) words[k] &= o.words[k];
        return *this;
    }
    ProcSet& operator|=(const ProcSet& o) noexcept {
        for (int k = 0; k < kWords; ++k) words[k] |= o.words[k];
        return *this;
    }
    ProcSet operator~() const noexcept {
        ProcSet r;
        for (int k = 0; k < kWords; ++k) r.words[k] = ~words[k];
        return r;
    }
    friend ProcSet operator&(ProcSet a, const ProcSet& b) noexcept { return a &= b; }
    friend ProcSet operator|(ProcSet a, const ProcSet& b) noexcept { return a |= b; }
    friend bool operator==(const ProcSet& a, const ProcSet& b) noexcept {
        return std::memcmp(a.words, b.words, sizeof a.words) == 0;
    }
};

struct PlacedJob {
    int allotment = 1;  // from DP, >= 1
    ProcSet procs;      // in: the set it had (empty for a newcomer); out: the set it gets
};

// Jobs in arrival order. Rules, in this order:
//  1. A job keeps the processors it had, up to its allotment (the lowest indices when it
//     shrinks); of two jobs claiming the same processor (a corrupt row), the earlier keeps it.
//  2. A job that needs more takes free processors nearest to the ones it holds (same caches),
//     the lowest free ones when it holds none.
//  3. When no processor is free (more jobs than P, or a corrupt allotment), it takes the ones
//     with the fewest owners: sets then overlap, never go empty.
// Afterwards every job holds exactly min(allotment, P) processors, all below P.
void place(std::vector<PlacedJob>& jobs, int P);

// The processors of [0, P) that no job in `jobs` holds: idle ones, which a job may use beyond its
// own set while nobody else has them (the work-conserving half of confinement, shim/confine.hpp).
ProcSet unheld(const std::vector<PlacedJob>& jobs, int P);

// Raw row storage <-> ProcSet (the row keeps the set as kMaxProcessors / 64 words).
ProcSet procs_from_words(const std::uint64_t* words);
void procs_to_words(const ProcSet& s, std::uint64_t* words);

}  // namespace apshim::gat
