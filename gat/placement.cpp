#include "gat/placement.hpp"

#include <algorithm>
#include <climits>
#include <cstring>

namespace apshim::gat {
namespace {

// Index-wise distance from each processor to the nearest one in `held` (INT_MAX when none).
std::vector<int> distance_to(const ProcSet& held, int P) {
    std::vector<int> d(static_cast<std::size_t>(P), INT_MAX);
    int last = -1;
    for (int i = 0; i < P; ++i) {
        if (held[i]) last = i;
        if (last >= 0) d[i] = i - last;
    }
    last = -1;
    for (int i = P - 1; i >= 0; --i) {
        if (held[i]) last = i;
        if (last >= 0) d[i] = std::min(d[i], last - i);
    }
    return d;
}

}  // namespace

void place(std::vector<PlacedJob>& jobs, int P) {
    P = std::clamp(P, 1, kMaxProcessors);
    ProcSet valid;
    for (int i = 0; i < P; ++i) valid.set(i);
    ProcSet taken;
    bool short_of_some = false;
    // 1. Keep what you had, up to the allotment (the steady state ends here: word operations).
    for (PlacedJob& j : jobs) {
        int want = std::clamp(j.allotment, 1, P);
        ProcSet keep = j.procs & valid & ~taken;
        int n = keep.count();
        for (int i = P - 1; i >= 0 && n > want; --i)
            if (keep[i]) keep.reset(i), --n;
        j.procs = keep;
        taken |= keep;
        short_of_some |= n < want;
    }
    if (!short_of_some) return;
    // 2. Grow into free processors, nearest first. 3. Share the least shared when none is free.
    std::vector<int> owners(static_cast<std::size_t>(P), 0);
    for (const PlacedJob& j : jobs)
        for (int i = 0; i < P; ++i)
            if (j.procs[i]) ++owners[i];
    for (PlacedJob& j : jobs) {
        int need = std::clamp(j.allotment, 1, P) - j.procs.count();
        if (need <= 0) continue;
        std::vector<int> d = distance_to(j.procs, P);
        std::vector<int> candidates;
        for (int i = 0; i < P; ++i)
            if (!j.procs[i]) candidates.push_back(i);
        // Fewest owners first (free ones have none), then nearest to what the job holds, then
        // the lowest index (a newcomer gets the lowest free run).
        std::sort(candidates.begin(), candidates.end(), [&](int a, int b) {
            if (owners[a] != owners[b]) return owners[a] < owners[b];
            if (d[a] != d[b]) return d[a] < d[b];
            return a < b;
        });
        for (int k = 0; k < need && k < static_cast<int>(candidates.size()); ++k) {
            j.procs.set(candidates[k]);
            ++owners[candidates[k]];
        }
    }
}

ProcSet unheld(const std::vector<PlacedJob>& jobs, int P) {
    P = std::clamp(P, 1, kMaxProcessors);
    ProcSet held, free;
    for (const PlacedJob& j : jobs) held |= j.procs;
    for (int i = 0; i < P; ++i)
        if (!held[i]) free.set(i);
    return free;
}

ProcSet procs_from_words(const std::uint64_t* words) {
    ProcSet s;
    std::memcpy(s.words, words, sizeof s.words);
    return s;
}

void procs_to_words(const ProcSet& s, std::uint64_t* words) { std::memcpy(words, s.words, sizeof s.words); }

}  // namespace apshim::gat
