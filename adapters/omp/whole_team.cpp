#include "adapters/omp/whole_team.hpp"

#include <dlfcn.h>
#include <strings.h>

#include <algorithm>
#include <cstring>

#include "adapters/common/elf_symtab.hpp"
#include "adapters/common/next_fn.hpp"

namespace apshim::omp_adapter {
namespace {
// The cache's owner key for these answers (cached_site_answer).
const char kOwner = 0;
// Eigen::internal::parallelize_gemm<...>, whatever its template arguments (the functor, the index
// type): the prefix names the function itself, not one of its arguments' types.
constexpr char kEigenGemm[] = "_ZN5Eigen8internal16parallelize_gemm";
// Its instantiations in code without a dynamic symbol (a program of one's own, unstripped).
constinit PrefixedFunctions g_eigen_gemm_in_symtab{kEigenGemm};

// team_need() on a cache miss: the library's file name, else what it defines, whatever its file
// is called (a renamed build), else the function that forks (Eigen's products, compiled into any
// object: its dynamic symbol, else its object's .symtab).
TeamNeed decide_team_need(const void* site) noexcept {
    Dl_info where{};
    const bool found = dladdr(site, &where) != 0;
    TeamNeed need = found ? library_team_need(where.dli_fname) : TeamNeed::any;
    if (need == TeamNeed::any && object_defines(site, "openblas_get_config")) need = TeamNeed::whole;
    if (need == TeamNeed::any && object_defines(site, "bli_info_get_version_str")) need = TeamNeed::whole_or_one;
    if (need == TeamNeed::any && found) need = function_team_need(where.dli_sname);
    // No exported name (an executable's function, or a hidden one): the file's full symbol table.
    if (need == TeamNeed::any && found && !where.dli_sname && g_eigen_gemm_in_symtab.contains(site))
        need = TeamNeed::any_spinning;
    return need;
}
}  // namespace

TeamNeed library_team_need(const char* file) noexcept {
    if (!file) return TeamNeed::any;
    const char* slash = std::strrchr(file, '/');
    const char* base = slash ? slash + 1 : file;
    // libopenblas.so.0 (Debian's alternatives), libopenblasp-r0.3.21.so, a wheel's
    // libscipy_openblas-<hash>.so (pthreads builds fork no OpenMP region: no harm).
    if (strcasestr(base, "openblas")) return TeamNeed::whole;
    // libblis.so.4 (Debian's blis-openmp), libblis-mt.so (AOCL); a prefix, since "blis" alone is
    // inside other words (libpublish). Debian's BLIS also comes as blis-openmp/libblas.so.3, a
    // whole copy exporting the BLAS names only (the one NumPy loads): a library in a directory
    // named blis-<threading>.
    if (strncasecmp(base, "libblis", 7) == 0) return TeamNeed::whole_or_one;
    if (slash && strncasecmp(base, "lib", 3) == 0) {
        const char* dir = slash;
        while (dir > file && dir[-1] != '/') --dir;
        if (strncasecmp(dir, "blis-", 5) == 0) return TeamNeed::whole_or_one;
    }
    return TeamNeed::any;
}

TeamNeed function_team_need(const char* symbol) noexcept {
    if (symbol && std::strncmp(symbol, kEigenGemm, sizeof kEigenGemm - 1) == 0) return TeamNeed::any_spinning;
    return TeamNeed::any;
}

bool begin_spinning_team(State& s, int team, bool spins, bool sees_end) noexcept {
    if (!spins || team <= 1) return false;
    int seen = s.spinning_team.load(std::memory_order_relaxed);
    while (seen < team && !s.spinning_team.compare_exchange_weak(seen, team, std::memory_order_relaxed)) {
    }
    if (sees_end) s.spinning_open.fetch_add(1, std::memory_order_relaxed);
    return sees_end;
}

void end_spinning_team(State& s) noexcept { s.spinning_open.fetch_sub(1, std::memory_order_relaxed); }

bool begin_sections_team(State& s, int team) noexcept {
    if (team <= 1) return false;
    s.sections_team.store(team, std::memory_order_relaxed);
    s.sections_begun.fetch_add(1, std::memory_order_relaxed);
    s.sections_open.fetch_add(1, std::memory_order_relaxed);
    return true;
}

void end_sections_team(State& s) noexcept { s.sections_open.fetch_sub(1, std::memory_order_relaxed); }

int spinning_team_at_sample(State& s, SpinningSeen& seen) noexcept {
    int team = s.spinning_team.exchange(0, std::memory_order_relaxed);
    // A team begun since the last sample is kept for the next one even where no region reads as
    // open yet: begin_spinning_team() raises the team, then counts the region open, and a sample
    // between the two (the forking thread preempted there, on the one CPU its team shares at
    // allotment 1) took the team and forgot it, so that every later sample read the region open
    // with no team: a BLIS stand-in's call of 150 ms ran confined to one CPU for its whole length
    // (omp.gcc.spinning_team under TSan, 1 run in 13, sixty-seventh session). Where no region is
    // open at the next sample either, the team is forgotten then.
    if (s.spinning_open.load(std::memory_order_relaxed) > 0) team = std::max(team, seen.open_team);
    seen.open_team = team;
    unsigned begun = s.sections_begun.load(std::memory_order_relaxed);
    if (s.sections_open.load(std::memory_order_relaxed) > 0 && begun == seen.sections_begun) {
        if (++seen.sections_held >= kSectionsHeldSamples) team = std::max(team, s.sections_team.load(std::memory_order_relaxed));
    } else {
        seen.sections_held = 0;
    }
    seen.sections_begun = begun;
    return team;
}

TeamNeed team_need(const void* site) noexcept {
    if (!site) return TeamNeed::any;
    return static_cast<TeamNeed>(cached_site_answer(site, &kOwner, [](const void* at) {
        return static_cast<unsigned>(decide_team_need(at));
    }));
}

}  // namespace apshim::omp_adapter
