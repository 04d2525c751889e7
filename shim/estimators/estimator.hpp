// Desire estimators: from one est_cycle's measurements to the job's processor desire.
//
// Pure logic on the controller thread; bench/sim links the same code. Each policy is a few
// lines with its constants named here and the reason for each.
#pragma once

#include <memory>
#include <string_view>

namespace apshim {

struct EstimatorInput {
    double inefficiency = 0;  // r: fraction of the usage's processor time not spent on user work, [0, 1]
    double busy_procs = 0;    // average number of threads executing user work during the cycle
    int usage = 1;            // p: threads allowed to work during the cycle
    int allotment = 1;        // a: the allotment in force during the cycle
    int P = 1;                // processors in the table
    double eta = 0.5;         // target efficiency
};

class Estimator {
public:
    virtual ~Estimator() = default;
    virtual const char* name() const = 0;
    // The desire for the next cycle, in [1, P].
    virtual int next_desire(const EstimatorInput& in) = 0;
};

// The registry's names: every policy there is (APSHIM_POLICY values, `--policy`), the default
// first. make_estimator() builds each; the options table lists and checks them from here.
inline constexpr std::string_view kPolicies[] = {"wsap", "static", "asteal", "inst"};

// The estimator called `policy` (one of kPolicies); unknown names give the default, WSAP.
std::unique_ptr<Estimator> make_estimator(std::string_view policy);

// Sen §6.1 step 2: r <= 1 - eta: d = ceil(p / eta) (explore); else d = ceil(((1 - r) / eta) * p);
// clamped to [1, P].
int wsap_desire(double r, int p, double eta, int P);

}  // namespace apshim
