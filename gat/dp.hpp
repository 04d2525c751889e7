// Algorithm DP (dynamic equipartitioning, Sen §5.2): fair, efficient and conservative
// allotments, recomputed incrementally on each arrival, departure or desire change.
//
// Pure logic on a vector of jobs (no shared memory, no processes): the table (table.cpp) copies
// its live rows in, calls one of these, and writes allotments back; bench/sim calls them too.
#pragma once

#include <cstdint>
#include <vector>

namespace apshim::gat {

struct DpJob {
    int desire = 1;          // d_j >= 1
    int allotment = 0;       // a_j
    std::uint64_t order = 0; // arrival order; ties go to the earlier job (Sen Fig 5-2)
};

// Job j arrived (allotment 0) or raised its desire: it takes free processors, then one at a
// time from the job with the highest allotment until it is satisfied or holds its fair share.
void dp_grow(std::vector<DpJob>& jobs, int P, std::size_t j);

// A job lowered its desire or left (already removed from `jobs`): processors above a job's
// desire are freed and handed one at a time to the deprived job with the lowest allotment.
void dp_shrink(std::vector<DpJob>& jobs, int P);

// One entry point for a desire change of job j from old_desire: grow or shrink.
void dp_desire_changed(std::vector<DpJob>& jobs, int P, std::size_t j, int old_desire);

// Restores every property from any state (after a crash mid-update, a corrupted row, a change
// of P). A no-op on an allocation that already has them; the incremental steps end with it as
// a safety net, so the table's invariants never rest on the incremental rules alone.
void dp_repair(std::vector<DpJob>& jobs, int P);

// Sen's fair share (Eq. 5.1), as a real number: processors left after jobs desiring less than
// floor(P/J) are served, divided among the others. +infinity when every job is in that set.
double dp_fair_share(const std::vector<DpJob>& jobs, int P);

struct DpCheck {
    bool fair = true;          // a deprived job j => every a_i <= a_j + 1
    bool efficient = true;     // a deprived job => sum a = P (or more when J > P)
    bool conservative = true;  // a_j <= d_j
    bool at_least_one = true;  // a_j >= 1
    bool within_P = true;      // sum a <= max(P, J)
    bool ok() const { return fair && efficient && conservative && at_least_one && within_P; }
};
DpCheck dp_check(const std::vector<DpJob>& jobs, int P);

}  // namespace apshim::gat
