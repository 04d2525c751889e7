#include "gat/dp.hpp"

#include <cmath>
#include <limits>

namespace apshim::gat {
namespace {

int sum_allotted(const std::vector<DpJob>& jobs) {
    int s = 0;
    for (const DpJob& j : jobs) s += j.allotment;
    return s;
}

bool deprived(const DpJob& j) { return j.allotment < j.desire; }

// The job to take a processor from: highest allotment, ties to the earliest arrival; never
// `except`, never below one processor. Returns -1 if no job can give.
long pick_donor(const std::vector<DpJob>& jobs, std::size_t except) {
    long best = -1;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        if (i == except || jobs[i].allotment <= 1) continue;
        if (best < 0 || jobs[i].allotment > jobs[best].allotment ||
            (jobs[i].allotment == jobs[best].allotment && jobs[i].order < jobs[best].order))
            best = static_cast<long>(i);
    }
    return best;
}

// The deprived job to give a processor to: lowest allotment, then largest unmet desire, then
// earliest arrival (this order reproduces Sen Fig 5-2). -1 if nobody is deprived.
long pick_recipient(const std::vector<DpJob>& jobs) {
    long best = -1;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        const DpJob& c = jobs[i];
        if (!deprived(c)) continue;
        if (best < 0) { best = static_cast<long>(i); continue; }
        const DpJob& b = jobs[best];
        int cd = c.desire - c.allotment, bd = b.desire - b.allotment;
        if (c.allotment < b.allotment || (c.allotment == b.allotment && (cd > bd || (cd == bd && c.order < b.order))))
            best = static_cast<long>(i);
    }
    return best;
}

long pick_richest(const std::vector<DpJob>& jobs) { return pick_donor(jobs, std::numeric_limits<std::size_t>::max()); }

}  // namespace

double dp_fair_share(const std::vector<DpJob>& jobs, int P) {
    const int J = static_cast<int>(jobs.size());
    if (J == 0) return std::numeric_limits<double>::infinity();
    const int equi = P / J;
    int small_jobs = 0, small_alloc = 0;
    for (const DpJob& j : jobs)
        if (j.desire < equi) ++small_jobs, small_alloc += j.allotment;
    if (small_jobs == J) return std::numeric_limits<double>::infinity();
    return static_cast<double>(P - small_alloc) / (J - small_jobs);
}

void dp_grow(std::vector<DpJob>& jobs, int P, std::size_t j) {
    DpJob& me = jobs[j];
    // Step 1: free processors first.
    int free = P - sum_allotted(jobs);
    if (free > 0) me.allotment += std::min(free, me.desire - me.allotment > 0 ? me.desire - me.allotment : 0);
    // Steps 2-3: one processor at a time from the richest job, up to min(desire, fair share).
    while (me.allotment < me.desire && me.allotment < dp_fair_share(jobs, P)) {
        long donor = pick_donor(jobs, j);
        if (donor < 0 || jobs[donor].allotment <= me.allotment) break;  // a move would not make it fairer
        --jobs[donor].allotment;
        ++me.allotment;
    }
    dp_repair(jobs, P);
}

void dp_shrink(std::vector<DpJob>& jobs, int P) {
    for (DpJob& job : jobs)
        if (job.allotment > job.desire) job.allotment = job.desire;
    for (int free = P - sum_allotted(jobs); free > 0; --free) {
        long r = pick_recipient(jobs);
        if (r < 0) break;
        ++jobs[r].allotment;
    }
    dp_repair(jobs, P);
}

void dp_desire_changed(std::vector<DpJob>& jobs, int P, std::size_t j, int old_desire) {
    if (jobs[j].desire > old_desire)
        dp_grow(jobs, P, j);
    else if (jobs[j].desire < old_desire)
        dp_shrink(jobs, P);
    else
        dp_repair(jobs, P);
}

void dp_repair(std::vector<DpJob>& jobs, int P) {
    if (P < 1) P = 1;
    // Sanitise what may have come from a corrupted table.
    for (DpJob& job : jobs) {
        if (job.desire < 1) job.desire = 1;
        if (job.desire > P) job.desire = P;
        if (job.allotment < 0) job.allotment = 0;
        if (job.allotment > job.desire) job.allotment = job.desire;  // conservative
    }
    // Every job holds at least one processor: from the richest, or beyond P when J > P
    // (Sen's process control: each job keeps running).
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        if (jobs[i].allotment >= 1) continue;
        if (sum_allotted(jobs) >= P) {
            long donor = pick_donor(jobs, i);
            if (donor >= 0) --jobs[donor].allotment;
        }
        jobs[i].allotment = 1;
    }
    // More than P handed out while some job holds more than one: give back from the richest.
    for (int over = sum_allotted(jobs) - P; over > 0; --over) {
        long r = pick_richest(jobs);
        if (r < 0) break;
        --jobs[r].allotment;
    }
    // Efficient: no free processor while a job is deprived.
    for (int free = P - sum_allotted(jobs); free > 0; --free) {
        long r = pick_recipient(jobs);
        if (r < 0) break;
        ++jobs[r].allotment;
    }
    // Fair: while a deprived job has two fewer than some other job, move one across.
    for (;;) {
        long poor = pick_recipient(jobs);
        long rich = pick_richest(jobs);
        if (poor < 0 || rich < 0 || jobs[rich].allotment <= jobs[poor].allotment + 1) break;
        --jobs[rich].allotment;
        ++jobs[poor].allotment;
    }
}

DpCheck dp_check(const std::vector<DpJob>& jobs, int P) {
    DpCheck c;
    const int J = static_cast<int>(jobs.size());
    int sum = sum_allotted(jobs), min_deprived = std::numeric_limits<int>::max(), max_alloc = 0;
    bool any_deprived = false;
    for (const DpJob& j : jobs) {
        if (j.allotment > j.desire) c.conservative = false;
        if (j.allotment < 1) c.at_least_one = false;
        if (j.allotment > max_alloc) max_alloc = j.allotment;
        if (deprived(j)) any_deprived = true, min_deprived = std::min(min_deprived, j.allotment);
    }
    if (any_deprived && max_alloc > min_deprived + 1) c.fair = false;
    if (any_deprived && sum < P) c.efficient = false;
    if (sum > std::max(P, J)) c.within_P = false;
    return c;
}

}  // namespace apshim::gat
