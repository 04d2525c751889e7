// Which libraries' regions keep whole teams where the program allows smaller ones
// (adapters/omp/whole_team.hpp): OpenBLAS's builds, by file name, and nothing else.
#include <catch2/catch.hpp>

#include "adapters/omp/whole_team.hpp"

using apshim::omp_adapter::needs_whole_team;
using apshim::omp_adapter::whole_team_library;

TEST_CASE("OpenBLAS's file names, and only they, ask for whole teams", "[whole_team]") {
    CHECK(whole_team_library("/usr/lib/x86_64-linux-gnu/openblas-openmp/libopenblas.so.0"));
    CHECK(whole_team_library("/usr/lib/x86_64-linux-gnu/libopenblasp-r0.3.21.so"));
    CHECK(whole_team_library("numpy.libs/libscipy_openblas64_-ff651d7f.so"));
    CHECK(whole_team_library("libOpenBLAS.so"));
    CHECK_FALSE(whole_team_library("/usr/lib/x86_64-linux-gnu/libgomp.so.1"));
    CHECK_FALSE(whole_team_library("/usr/lib/x86_64-linux-gnu/libblas.so.3"));
    // The directory is not the library: a program of its own under .../openblas-openmp/.
    CHECK_FALSE(whole_team_library("/opt/openblas-openmp/bin/myprog"));
    CHECK_FALSE(whole_team_library(nullptr));
}

TEST_CASE("code outside such a library keeps the program's permission, asked twice", "[whole_team]") {
    const void* here = reinterpret_cast<const void*>(&whole_team_library);
    CHECK_FALSE(needs_whole_team(here));
    CHECK_FALSE(needs_whole_team(here));  // the cached answer
    CHECK_FALSE(needs_whole_team(nullptr));
}
