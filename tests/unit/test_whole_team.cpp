// Which regions keep whole teams where the program allows smaller ones (adapters/omp/whole_team.hpp):
// OpenBLAS's builds, and BLIS's (whole or one), by file name, and `parallel sections` of two or
// more sections; and which teams count as spinning (BLIS's, and Eigen's products by the function that
// forks them).
#include <catch2/catch.hpp>

#include "adapters/omp/whole_team.hpp"

using apshim::omp_adapter::library_team_need;
using apshim::omp_adapter::team_need;
using apshim::omp_adapter::TeamNeed;

TEST_CASE("OpenBLAS's file names, and only they, ask for whole teams", "[whole_team]") {
    CHECK(library_team_need("/usr/lib/x86_64-linux-gnu/openblas-openmp/libopenblas.so.0") == TeamNeed::whole);
    CHECK(library_team_need("/usr/lib/x86_64-linux-gnu/libopenblasp-r0.3.21.so") == TeamNeed::whole);
    CHECK(library_team_need("numpy.libs/libscipy_openblas64_-ff651d7f.so") == TeamNeed::whole);
    CHECK(library_team_need("libOpenBLAS.so") == TeamNeed::whole);
    CHECK(library_team_need("/usr/lib/x86_64-linux-gnu/libgomp.so.1") == TeamNeed::any);
    CHECK(library_team_need("/usr/lib/x86_64-linux-gnu/libblas.so.3") == TeamNeed::any);
    // The directory is not the library: a program of its own under .../openblas-openmp/.
    CHECK(library_team_need("/opt/openblas-openmp/bin/myprog") == TeamNeed::any);
    CHECK(library_team_need(nullptr) == TeamNeed::any);
}

TEST_CASE("BLIS's file names ask for a whole team or one, and words that hold blis do not", "[whole_team]") {
    CHECK(library_team_need("/usr/lib/x86_64-linux-gnu/blis-openmp/libblis.so.4") == TeamNeed::whole_or_one);
    CHECK(library_team_need("/opt/AMD/aocl/lib/libblis-mt.so.4") == TeamNeed::whole_or_one);
    CHECK(library_team_need("libBLIS.so") == TeamNeed::whole_or_one);
    // Debian's BLAS alternative from BLIS: a whole copy of BLIS named libblas, in blis-openmp/.
    CHECK(library_team_need("/usr/lib/x86_64-linux-gnu/blis-openmp/libblas.so.3") == TeamNeed::whole_or_one);
    CHECK(library_team_need("/usr/lib/x86_64-linux-gnu/blis-pthread/libblas.so.3") == TeamNeed::whole_or_one);
    CHECK(library_team_need("/usr/lib/libpublish.so") == TeamNeed::any);
    CHECK(library_team_need("/usr/lib/x86_64-linux-gnu/libblas.so.3") == TeamNeed::any);
    CHECK(library_team_need("/opt/blis-build/bin/myprog") == TeamNeed::any);
    CHECK(library_team_need("blis-openmp/libblas.so.3") == TeamNeed::whole_or_one);
}

TEST_CASE("code outside such a library keeps the program's permission, asked twice", "[whole_team]") {
    const void* here = reinterpret_cast<const void*>(&library_team_need);
    CHECK(team_need(here) == TeamNeed::any);
    CHECK(team_need(here) == TeamNeed::any);  // the cached answer
    CHECK(team_need(nullptr) == TeamNeed::any);
}

TEST_CASE("only BLIS's teams spin at their meetings, and a team that does not spin counts nothing", "[whole_team]") {
    using apshim::omp_adapter::begin_spinning_team;
    using apshim::omp_adapter::spins_at_meetings;
    CHECK(spins_at_meetings(TeamNeed::whole_or_one));
    CHECK_FALSE(spins_at_meetings(TeamNeed::whole));  // OpenBLAS waits with sched_yield
    CHECK_FALSE(spins_at_meetings(TeamNeed::any));
    auto* state = new apshim::omp_adapter::State;
    CHECK_FALSE(begin_spinning_team(*state, 4, /*spins=*/false, /*sees_end=*/true));
    CHECK_FALSE(begin_spinning_team(*state, 1, /*spins=*/true, /*sees_end=*/true));  // a team of one meets nobody
    CHECK(state->spinning_team.load() == 0);
    CHECK(state->spinning_open.load() == 0);
    CHECK(begin_spinning_team(*state, 2, /*spins=*/true, /*sees_end=*/true));
    CHECK(state->spinning_team.load() == 2);
    CHECK(state->spinning_open.load() == 1);
    delete state;
}

TEST_CASE("a spinning team read at a sample stays until its region ends, also one not yet counted open then", "[whole_team]") {
    using apshim::omp_adapter::end_spinning_team;
    using apshim::omp_adapter::SpinningSeen;
    using apshim::omp_adapter::spinning_team_at_sample;
    auto* state = new apshim::omp_adapter::State;
    SpinningSeen seen;
    CHECK(spinning_team_at_sample(*state, seen) == 0);
    // A region begun and counted open: read at every sample until it ends.
    CHECK(apshim::omp_adapter::begin_spinning_team(*state, 2, /*spins=*/true, /*sees_end=*/true));
    CHECK(spinning_team_at_sample(*state, seen) == 2);
    CHECK(spinning_team_at_sample(*state, seen) == 2);
    end_spinning_team(*state);
    CHECK(spinning_team_at_sample(*state, seen) == 0);
    // A sample between begin_spinning_team()'s two steps: the team raised, the region not yet
    // counted open. The next samples, with the region open, still read its team (they read none
    // before the sixty-eighth session, and the region ran confined below it).
    state->spinning_team.store(2);
    CHECK(spinning_team_at_sample(*state, seen) == 2);
    state->spinning_open.fetch_add(1);
    CHECK(spinning_team_at_sample(*state, seen) == 2);
    CHECK(spinning_team_at_sample(*state, seen) == 2);
    end_spinning_team(*state);
    CHECK(spinning_team_at_sample(*state, seen) == 0);
    // A team begun and ended between two samples: read once, then forgotten.
    state->spinning_team.store(3);
    CHECK(spinning_team_at_sample(*state, seen) == 3);
    CHECK(spinning_team_at_sample(*state, seen) == 0);
    delete state;
}

TEST_CASE("a sections region counts as spinning once held open through kSectionsHeldSamples samples", "[whole_team]") {
    using apshim::omp_adapter::begin_sections_team;
    using apshim::omp_adapter::end_sections_team;
    using apshim::omp_adapter::kSectionsHeldSamples;
    using apshim::omp_adapter::SpinningSeen;
    using apshim::omp_adapter::spinning_team_at_sample;
    auto* state = new apshim::omp_adapter::State;
    SpinningSeen seen;
    CHECK(begin_sections_team(*state, 2));
    CHECK(spinning_team_at_sample(*state, seen) == 0);  // begun since the last sample
    for (int held = 1; held < kSectionsHeldSamples; ++held) CHECK(spinning_team_at_sample(*state, seen) == 0);
    CHECK(spinning_team_at_sample(*state, seen) == 2);
    CHECK(begin_sections_team(*state, 2));  // another begins: held afresh
    CHECK(spinning_team_at_sample(*state, seen) == 0);
    end_sections_team(*state);
    end_sections_team(*state);
    CHECK(spinning_team_at_sample(*state, seen) == 0);
    delete state;
}

TEST_CASE("a sections region of a team of two or more is counted open and begun, a team of one is not", "[whole_team]") {
    using apshim::omp_adapter::begin_sections_team;
    using apshim::omp_adapter::end_sections_team;
    auto* state = new apshim::omp_adapter::State;
    CHECK_FALSE(begin_sections_team(*state, 1));
    CHECK(state->sections_open.load() == 0);
    CHECK(state->sections_begun.load() == 0);
    CHECK(begin_sections_team(*state, 3));
    CHECK(begin_sections_team(*state, 2));  // a second root's: the team is the last begun
    CHECK(state->sections_open.load() == 2);
    CHECK(state->sections_begun.load() == 2);
    CHECK(state->sections_team.load() == 2);
    end_sections_team(*state);
    end_sections_team(*state);
    CHECK(state->sections_open.load() == 0);
    CHECK(state->spinning_open.load() == 0);  // not a library's spinning team
    delete state;
}

TEST_CASE("a parallel sections region of two or more sections needs its whole team", "[whole_team]") {
    using apshim::omp_adapter::fork_team_need;
    using apshim::omp_adapter::sections_may_meet;
    const void* here = reinterpret_cast<const void*>(&library_team_need);
    CHECK_FALSE(sections_may_meet(0));  // not a sections region
    CHECK_FALSE(sections_may_meet(1));  // one section waits for nobody
    CHECK(sections_may_meet(2));
    CHECK(fork_team_need(here, 0) == TeamNeed::any);
    CHECK(fork_team_need(here, 1) == TeamNeed::any);
    CHECK(fork_team_need(here, 2) == TeamNeed::whole);
    CHECK(fork_team_need(nullptr, 3) == TeamNeed::whole);
}

TEST_CASE("Eigen's parallel products, told by the function that forks, spin at their meetings at any size",
          "[whole_team]") {
    using apshim::omp_adapter::function_team_need;
    using apshim::omp_adapter::spins_at_meetings;
    // Two of RcppML.so's exported instantiations (Eigen 3.4, R's RcppML 0.3.7), cut short.
    CHECK(function_team_need("_ZN5Eigen8internal16parallelize_gemmILb1ENS0_12gemm_functorIdlNS0_29general_matrix_"
                             "matrix_productIldLi0ELb0EdLi1ELb0ELi0ELi1EEE") == TeamNeed::any_spinning);
    CHECK(function_team_need("_ZN5Eigen8internal16parallelize_gemmILb0ENS0_12gemm_functorIdlE") == TeamNeed::any_spinning);
    // A function of the program's own that takes Eigen's types, Eigen's other functions, none.
    CHECK(function_team_need("_Z14projectInPlaceRN6RcppML12SparseMatrixERKN5Eigen6MatrixIdLin1ELin1ELi0ELin1ELin1EEE") ==
          TeamNeed::any);
    CHECK(function_team_need("_ZN5Eigen8internal13gemm_functorIdlE") == TeamNeed::any);
    CHECK(function_team_need(nullptr) == TeamNeed::any);
    CHECK(spins_at_meetings(TeamNeed::any_spinning));
}
