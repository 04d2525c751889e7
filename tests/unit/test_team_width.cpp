// The width new OpenMP teams form at: the highest of the last few allotments, so a one-cycle dip
// does not pin a whole (long) region to the dip's width (adapters/omp/omp_state.hpp).
#include <catch2/catch.hpp>

#include "adapters/omp/omp_state.hpp"

using apshim::omp_adapter::RecentMax;

TEST_CASE("a one-cycle dip in the allotment does not narrow new teams", "[team_width]") {
    RecentMax m;
    CHECK(m.push(4) == 4);
    CHECK(m.push(4) == 4);
    CHECK(m.push(1) == 4);  // the dip
    CHECK(m.push(4) == 4);
}

TEST_CASE("a drop that lasts kCycles cycles narrows new teams; a rise widens them at once", "[team_width]") {
    RecentMax m;
    m.push(8);
    int width = 0;
    for (int i = 0; i < RecentMax::kCycles; ++i) width = m.push(2);
    CHECK(width == 2);
    CHECK(m.push(6) == 6);
    m.reset();
    CHECK(m.push(1) == 1);
}
