#include "shim/estimators/estimator.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>

namespace apshim {
namespace {

// Floating-point slack for ceil(): (1 - 0.55) / 0.5 * 5 must give 5, not 5.000000001 -> 6.
constexpr double kCeilSlack = 1e-9;

int clamp_desire(double d, int P) {
    double c = std::ceil(d - kCeilSlack);
    if (!(c >= 1)) return 1;  // also catches NaN
    return c >= P ? P : static_cast<int>(c);
}

class Wsap final : public Estimator {
public:
    const char* name() const override { return kPolicies[0].data(); }
    int next_desire(const EstimatorInput& in) override { return wsap_desire(in.inefficiency, in.usage, in.eta, in.P); }
};

// No adaptation: always ask for the whole machine; DP still splits it fairly. This is the
// "equipartition only" baseline.
class Static final : public Estimator {
public:
    const char* name() const override { return kPolicies[1].data(); }
    int next_desire(const EstimatorInput& in) override { return in.P; }
};

// A-Steal (Agrawal, He, Leiserson; Haselsteiner §2): multiplicative increase/decrease.
// Inefficient cycle: d /= rho. Efficient and satisfied (a >= d): d *= rho. Efficient but
// deprived: keep d (the job did not get what it asked; asking more changes nothing).
class ASteal final : public Estimator {
public:
    const char* name() const override { return kPolicies[2].data(); }
    int next_desire(const EstimatorInput& in) override {
        constexpr double kRho = 2.0;  // the paper's responsiveness parameter; 2 matches WSAP's eta=0.5 growth
        bool efficient = (1.0 - in.inefficiency) >= in.eta;
        if (!efficient)
            desire_ = desire_ / kRho;
        else if (in.allotment >= static_cast<int>(std::ceil(desire_ - kCeilSlack)))
            desire_ = desire_ * kRho;
        desire_ = std::clamp(desire_, 1.0, static_cast<double>(in.P));
        return clamp_desire(desire_, in.P);
    }

private:
    double desire_ = 1.0;
};

// The strawman of Sen Fig 7-4 (Cilk-AP-INST): desire = instantaneous parallelism, i.e. the
// threads found working plus one. LOOPY shows why it under-estimates.
class Instantaneous final : public Estimator {
public:
    const char* name() const override { return kPolicies[3].data(); }
    int next_desire(const EstimatorInput& in) override { return clamp_desire(std::floor(in.busy_procs + 0.5) + 1, in.P); }
};

}  // namespace

int wsap_desire(double r, int p, double eta, int P) {
    if (p < 1) p = 1;
    if (!(eta > 0 && eta <= 1)) eta = 0.5;
    if (!(r >= 0)) r = 0;  // NaN or negative: treat as fully efficient
    if (r > 1) r = 1;
    if (r <= 1 - eta) return clamp_desire(p / eta, P);
    return clamp_desire((1 - r) / eta * p, P);
}

namespace {
template <class E>
std::unique_ptr<Estimator> make() {
    return std::make_unique<E>();
}
// In kPolicies' order: each class's name() is its entry there.
constexpr std::unique_ptr<Estimator> (*kMakers[])() = {&make<Wsap>, &make<Static>, &make<ASteal>, &make<Instantaneous>};
static_assert(std::size(kMakers) == std::size(kPolicies), "one estimator per registered policy name");
}  // namespace

std::unique_ptr<Estimator> make_estimator(std::string_view policy) {
    for (std::size_t i = 0; i < std::size(kPolicies); ++i)
        if (policy == kPolicies[i]) return kMakers[i]();
    return kMakers[0]();
}

}  // namespace apshim
