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

// APSHIM_POLICY names: wsap, static, asteal, inst. Unknown names give WSAP.
std::unique_ptr<Estimator> make_estimator(std::string_view policy);

// Sen §6.1 step 2: r <= 1 - eta: d = ceil(p / eta) (explore); else d = ceil(((1 - r) / eta) * p);
// clamped to [1, P].
int wsap_desire(double r, int p, double eta, int P);

}  // namespace apshim
