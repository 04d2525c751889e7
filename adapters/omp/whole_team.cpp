#include "adapters/omp/whole_team.hpp"

#include <dlfcn.h>

#include <cstring>

#include "adapters/common/next_fn.hpp"

namespace apshim::omp_adapter {
namespace {
// The cache's owner key for these answers, and the two answers (SiteCache holds pointers; null
// means "not cached").
const char kOwner = 0;
void* const kWhole = reinterpret_cast<void*>(2);
void* const kAny = reinterpret_cast<void*>(1);
}  // namespace

bool whole_team_library(const char* file) noexcept {
    if (!file) return false;
    const char* slash = std::strrchr(file, '/');
    const char* base = slash ? slash + 1 : file;
    // libopenblas.so.0 (Debian's alternatives), libopenblasp-r0.3.21.so, a wheel's
    // libscipy_openblas-<hash>.so (pthreads builds fork no OpenMP region: no harm).
    return strcasestr(base, "openblas") != nullptr;
}

bool needs_whole_team(const void* site) noexcept {
    if (!site) return false;
    if (void* known = g_site_cache.find(site, &kOwner)) return known == kWhole;
    Dl_info where{};
    bool whole = dladdr(site, &where) && whole_team_library(where.dli_fname);
    g_site_cache.insert(site, &kOwner, whole ? kWhole : kAny);
    return whole;
}

}  // namespace apshim::omp_adapter
