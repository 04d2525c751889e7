#include "adapters/omp/whole_team.hpp"

#include <dlfcn.h>
#include <strings.h>

#include <cstring>

#include "adapters/common/next_fn.hpp"

namespace apshim::omp_adapter {
namespace {
// The cache's owner key for these answers, and the two answers (SiteCache holds pointers; null
// means "not cached").
const char kOwner = 0;
void* const kWhole = reinterpret_cast<void*>(2);
void* const kAny = reinterpret_cast<void*>(1);

bool contains_nocase(const char* s, const char* word) noexcept {
    std::size_t n = std::strlen(word);
    for (; *s; ++s)
        if (strncasecmp(s, word, n) == 0) return true;
    return false;
}
}  // namespace

bool whole_team_library(const char* file) noexcept {
    if (!file) return false;
    const char* slash = std::strrchr(file, '/');
    const char* base = slash ? slash + 1 : file;
    // libopenblas.so.0 (Debian's alternatives), libopenblasp-r0.3.21.so, a wheel's
    // libscipy_openblas-<hash>.so (pthreads builds fork no OpenMP region: no harm).
    return contains_nocase(base, "openblas");
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
