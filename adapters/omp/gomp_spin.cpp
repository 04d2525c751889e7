// libgomp's spin-wait counts, following the job's situation (gomp_spin.hpp).
#include "adapters/omp/gomp_spin.hpp"

#include <link.h>
#include <sys/auxv.h>

#include <algorithm>
#include <cstdint>

#include "adapters/adapter.hpp"

namespace apshim::omp_adapter {
namespace {

using Count = unsigned long long;  // libgomp's gomp_spin_count_var and gomp_throttled_spin_count_var

// libgomp's count for more threads than CPUs when no wait policy is set (its env.c: 100, or the
// spin count where that is lower): found beside the spin count itself.
constexpr Count kLibgompThrottled = 100;
// libgomp's spin count when neither GOMP_SPINCOUNT nor OMP_WAIT_POLICY is set (its env.c).
constexpr Count kLibgompSpin = 300000;
// How far (in counts) the second one may lie from the first.
constexpr int kNear = 2;

struct Search {
    std::uintptr_t at = 0;           // an address inside the libgomp to search (code, or its base)
    Count spin = 0;                  // the value to look for
    Count throttled = 0;             // the value beside it
    bool matched = false;            // an object holds `at`
    std::uintptr_t lo = 0, hi = 0;   // that object's mapped span
    const char* name = nullptr;      // and its file name
    int found = 0;                   // candidates
    Count* where = nullptr;          // the first one
    Count* throttled_at = nullptr;   // its neighbour holding `throttled` (null: two neighbours do)
};

bool inside(std::uintptr_t a, std::uintptr_t begin, std::uintptr_t size) { return a >= begin && a - begin < size; }

int search_object(dl_phdr_info* info, size_t, void* arg) {
    auto* s = static_cast<Search*>(arg);
    // A base from dladdr is where the first segment's mapping begins: its page.
    static const std::uintptr_t kPage = getauxval(AT_PAGESZ);
    std::uintptr_t relro = 0, relro_size = 0, lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr)& ph = info->dlpi_phdr[i];
        std::uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
        if (ph.p_type == PT_LOAD) lo = std::min(lo, begin & ~(kPage - 1)), hi = std::max(hi, begin + ph.p_memsz);
        if (ph.p_type == PT_GNU_RELRO) relro = begin, relro_size = ph.p_memsz;
    }
    if (hi == 0 || s->at < lo || s->at >= hi) return 0;
    s->matched = true;
    s->lo = lo, s->hi = hi;
    s->name = info->dlpi_name;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr)& ph = info->dlpi_phdr[i];
        if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_W)) continue;
        std::uintptr_t begin = (info->dlpi_addr + ph.p_vaddr + 7) & ~std::uintptr_t{7};
        std::uintptr_t end = info->dlpi_addr + ph.p_vaddr + ph.p_memsz;
        for (std::uintptr_t a = begin; a + sizeof(Count) <= end; a += sizeof(Count)) {
            if (inside(a, relro, relro_size)) continue;  // read-only after relocation: never libgomp's counters
            auto* w = reinterpret_cast<const Count*>(a);
            if (*w != s->spin) continue;
            // libgomp declares the two together; compilers place them next to each other or
            // with one variable between (the GCC 8 libgomp that PyPI wheels bring: xgboost,
            // scikit-learn).
            int beside = 0, at = 0;
            for (int k : {-kNear, -1, 1, kNear}) {
                std::uintptr_t b = a + static_cast<std::intptr_t>(k) * static_cast<std::intptr_t>(sizeof(Count));
                if (b < begin || b + sizeof(Count) > end || inside(b, relro, relro_size)) continue;
                if (*reinterpret_cast<const Count*>(b) == s->throttled) ++beside, at = k;
            }
            if (beside == 0) continue;
            if (s->found++ == 0) {
                s->where = reinterpret_cast<Count*>(a);
                s->throttled_at = beside == 1 ? s->where + at : nullptr;
            }
        }
    }
    return 1;  // stop: libgomp searched
}

// ---- every libgomp the program's regions go to ----
// A process may hold two copies (Debian's, under NumPy's OpenBLAS, and the one a wheel such as
// scikit-learn's or xgboost's brings under its own name), and the one running the program's
// short regions may be either: each copy the adapter reports (the first one called, and those
// next_fn's RuntimeCopies noted) is searched once and followed from then on.

struct Copy {
    std::uintptr_t lo, hi;  // the object's mapped span
    Count* spin;            // gomp_spin_count_var (null: not found, left alone)
    Count* throttled;       // gomp_throttled_spin_count_var (null: not told apart)
};
constexpr int kMaxCopies = 4;

Copy g_copies[kMaxCopies];  // controller thread only, as is everything below
int g_ncopies = 0;
bool g_defaulted = false;  // g_default read
Count g_default = 0;       // what libgomp read at its start (the shim's default; 0: the user's waiting)
Waiting g_wait = Waiting::shim;  // what the copies hold

// libgomp's count for oversubscription as it derived it from the shim's spin count.
Count throttled_default() noexcept { return std::min(kLibgompThrottled, g_default); }

// The spin count and the count for oversubscription for `w`.
struct Counts {
    Count spin, throttled;
};
Counts counts_for(Waiting w) noexcept {
    switch (w) {
        case Waiting::none: return {0, 0};
        case Waiting::shim: break;
        case Waiting::runtime: return {kLibgompSpin, kLibgompThrottled};
    }
    return {g_default, throttled_default()};
}

void write_counts(const Copy& c) noexcept {
    if (!c.spin) return;
    // libgomp reads the counts with a plain load at every wait: an aligned 8-byte store is seen
    // whole, at the next wait or the one after. Both counts: libgomp spins the throttled one
    // whenever its threads outnumber the CPUs it saw at its start (OMP_NUM_THREADS above the
    // cores, nested teams, several threads forking teams): 16 threads on one CPU spun 100 rounds
    // per wait, 3 of a scikit-learn fit's 8 s (tests/real/sklearn_work.py 20000 100).
    Counts want = counts_for(g_wait);
    __atomic_store_n(c.spin, want.spin, __ATOMIC_RELAXED);
    if (c.throttled) __atomic_store_n(c.throttled, want.throttled, __ATOMIC_RELAXED);
}

// A copy not seen before, holding `at`: its counts are searched for, once.
void adopt(std::uintptr_t at) noexcept {
    for (int i = 0; i < g_ncopies; ++i)
        if (at >= g_copies[i].lo && at < g_copies[i].hi) return;
    if (g_ncopies == kMaxCopies) return;
    Search s;
    s.at = at;
    s.spin = g_default;
    s.throttled = throttled_default();
    dl_iterate_phdr(search_object, &s);
    if (!s.matched) return;
    Copy& copy = g_copies[g_ncopies++];
    copy = Copy{s.lo, s.hi, nullptr, nullptr};
    if (s.found != 1) {
        host().log(Host::Severity::info,
                   "libgomp's spin-wait count not found in %s's memory (%d candidates): its threads spin %llu rounds "
                   "per wait even where confinement has them share CPUs",
                   s.name && s.name[0] ? s.name : "libgomp", s.found, g_default);
        return;
    }
    copy.spin = s.where;
    copy.throttled = s.throttled_at;
    if (g_wait != Waiting::shim) write_counts(copy);
}

}  // namespace

void gomp_spin_follow(Waiting wait, std::span<const void* const> copies) noexcept {
    if (!g_defaulted) {
        g_defaulted = true;
        g_default = shim_gomp_spin_count();
    }
    if (g_default == 0) return;  // the user's waiting, kept as chosen
    for (const void* c : copies)
        if (c) adopt(reinterpret_cast<std::uintptr_t>(c));
    if (wait == g_wait) return;
    g_wait = wait;
    for (int i = 0; i < g_ncopies; ++i) write_counts(g_copies[i]);
}

}  // namespace apshim::omp_adapter
