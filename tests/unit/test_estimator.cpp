// The desire estimators: WSAP reproduces Sen's Figure 6-2 trace; the others behave as named.
#include <catch2/catch.hpp>

#include <cmath>

#include "shim/estimators/estimator.hpp"

using apshim::EstimatorInput;
using apshim::make_estimator;
using apshim::wsap_desire;

TEST_CASE("WSAP reproduces Sen's Figure 6-2 desire trace (eta = 0.5, P = 16)", "[estimator]") {
    struct Row { double pus; int p, d; };
    const Row rows[] = {{0.15, 4, 8}, {0.45, 8, 16}, {0.70, 8, 5}, {0.55, 5, 5}, {0.50, 5, 10}, {0.95, 8, 1}};
    for (const Row& r : rows) {
        INFO("PUS_ratio " << r.pus << " p " << r.p);
        CHECK(wsap_desire(r.pus, r.p, 0.5, 16) == r.d);
    }
}

TEST_CASE("WSAP clamps to [1, P] and survives nonsense input", "[estimator]") {
    CHECK(wsap_desire(0.0, 16, 0.5, 16) == 16);
    CHECK(wsap_desire(1.0, 16, 0.5, 16) == 1);
    CHECK(wsap_desire(NAN, 3, 0.5, 16) == 6);
    CHECK(wsap_desire(-1, 0, 0.5, 16) == 2);
    CHECK(wsap_desire(0.2, 4, 0.0, 16) == 8);  // invalid eta falls back to 0.5
    CHECK(wsap_desire(0.0, 1, 1.0, 4) == 1);   // eta 1: no exploration
}

TEST_CASE("WSAP alone reaches P within ceil(log_{1/eta} P) cycles from desire 1", "[estimator]") {
    for (double eta : {0.5, 0.25, 0.8}) {
        for (int P : {2, 4, 16, 64}) {
            int p = 1, cycles = 0;
            while (p < P && cycles < 100) p = wsap_desire(0.0, p, eta, P), ++cycles;
            int bound = static_cast<int>(std::ceil(std::log(P) / std::log(1 / eta) - 1e-9));
            INFO("eta " << eta << " P " << P);
            CHECK(cycles <= bound);
        }
    }
}

TEST_CASE("policies are selectable by name", "[estimator]") {
    EstimatorInput in;
    in.P = 8;
    in.usage = 2;
    in.allotment = 2;
    in.inefficiency = 0.0;
    in.busy_procs = 2.0;
    CHECK(std::string(make_estimator("wsap")->name()) == "wsap");
    CHECK(make_estimator("static")->next_desire(in) == 8);
    CHECK(make_estimator("inst")->next_desire(in) == 3);  // threads working + 1
    auto a = make_estimator("asteal");
    CHECK(a->next_desire(in) == 2);  // efficient and satisfied (a=2 >= d=1): doubles from 1
    in.inefficiency = 0.9;
    CHECK(a->next_desire(in) == 1);  // inefficient: halves
    CHECK(std::string(make_estimator("nonsense")->name()) == "wsap");
}
