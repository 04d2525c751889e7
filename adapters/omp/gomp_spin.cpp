// libgomp's spin-wait count, lowered while confinement shares the job's CPUs (gomp_spin.hpp).
#include "adapters/omp/gomp_spin.hpp"

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "adapters/adapter.hpp"

namespace apshim::omp_adapter {
namespace {

using Count = unsigned long long;  // libgomp's gomp_spin_count_var and gomp_throttled_spin_count_var

// libgomp's count for more threads than CPUs when no wait policy is set (its env.c: 100, or the
// spin count where that is lower): found beside the spin count itself.
constexpr Count kLibgompThrottled = 100;
// How far (in counts) the second one may lie from the first.
constexpr int kNear = 2;

struct Search {
    std::uintptr_t code = 0;         // an address inside libgomp's code (its GOMP_parallel)
    Count spin = 0;                  // the value to look for
    Count throttled = 0;             // the value beside it
    int found = 0;                   // candidates
    Count* where = nullptr;          // the first one
    Count* throttled_at = nullptr;   // its neighbour holding `throttled` (null: both neighbours do)
};

bool inside(std::uintptr_t a, std::uintptr_t begin, std::uintptr_t size) { return a >= begin && a - begin < size; }

int search_object(dl_phdr_info* info, size_t, void* arg) {
    auto* s = static_cast<Search*>(arg);
    bool holds_code = false;
    std::uintptr_t relro = 0, relro_size = 0;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr)& ph = info->dlpi_phdr[i];
        std::uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
        if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X) && inside(s->code, begin, ph.p_memsz)) holds_code = true;
        if (ph.p_type == PT_GNU_RELRO) relro = begin, relro_size = ph.p_memsz;
    }
    if (!holds_code) return 0;
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

// ---- every libgomp the process loaded ----
// A process may hold two copies (Debian's, under NumPy's OpenBLAS, and the one a wheel such as
// scikit-learn's or xgboost's brings under its own name), and the one running the program's
// short regions may be either: each copy's counts are found and followed. An object is a libgomp
// when its own code defines GOMP_parallel (not the shim, which defines one too). Each object is
// looked at once, and only after the loader's count of loads (dlpi_adds) moved.

struct Copy {
    std::uintptr_t base;  // the object's load address
    Count* spin;       // gomp_spin_count_var
    Count* throttled;  // gomp_throttled_spin_count_var (null: not told apart)
    Count throttled_default;
};
constexpr int kMaxCopies = 4;
constexpr int kMaxSeen = 2048;  // objects looked at (Python with SciPy and scikit-learn: ~300)
constexpr int kMaxNew = 64;     // objects looked at per look (the rest at the next cycle)
constexpr std::size_t kNameMax = 512;

Copy g_copies[kMaxCopies];  // controller thread only, as is everything below
int g_ncopies = 0;
std::uintptr_t g_seen[kMaxSeen];  // load addresses of the objects looked at
int g_nseen = 0;
unsigned long long g_adds = 0;  // dlpi_adds at the last look
unsigned long long g_subs = 0;  // dlpi_subs (unloads) at the last look
bool g_off = false;             // the user chose libgomp's waiting, or the shim is disabled
bool g_defaulted = false;       // g_default read
Count g_default = 0;            // what libgomp read at its start (the shim's default)
bool g_shared = false;          // what the copies hold: 0 (shared) or their defaults

struct Candidate {
    std::uintptr_t base, code_lo, code_hi;
    char name[kNameMax];
};
struct Look {
    std::uintptr_t self = 0;   // the shim's own load address
    unsigned long long adds = 0, subs = 0;
    bool adds_only = false;    // first pass: the counts of loads and unloads only
    int n = 0;
    Candidate found[kMaxNew];
};

bool seen(std::uintptr_t base) noexcept {
    for (int i = 0; i < g_nseen; ++i)
        if (g_seen[i] == base) return true;
    return false;
}

int look_object(dl_phdr_info* info, size_t size, void* arg) {
    auto* l = static_cast<Look*>(arg);
    if (l->adds_only) {
        if (size >= offsetof(dl_phdr_info, dlpi_tls_modid)) l->adds = info->dlpi_adds, l->subs = info->dlpi_subs;
        return 1;
    }
    if (!info->dlpi_name || !info->dlpi_name[0] || info->dlpi_addr == l->self || seen(info->dlpi_addr)) return 0;
    if (l->n == kMaxNew) return 1;
    if (std::strlen(info->dlpi_name) >= kNameMax) return 0;  // no path that long to dlopen (NOLOAD) anyway
    Candidate& c = l->found[l->n++];
    c.base = info->dlpi_addr;
    c.code_lo = c.code_hi = 0;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr)& ph = info->dlpi_phdr[i];
        if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X) && c.code_hi == 0)
            c.code_lo = info->dlpi_addr + ph.p_vaddr, c.code_hi = c.code_lo + ph.p_memsz;
    }
    std::strcpy(c.name, info->dlpi_name);
    return 0;
}

// The object's own GOMP_parallel, or 0 where it has none (dlsym also answers from its dependencies).
std::uintptr_t own_gomp_parallel(const Candidate& c) noexcept {
    void* h = dlopen(c.name, RTLD_LAZY | RTLD_NOLOAD);
    if (!h) return 0;
    auto fn = reinterpret_cast<std::uintptr_t>(dlsym(h, "GOMP_parallel"));
    dlclose(h);  // drops the reference NOLOAD took
    return fn >= c.code_lo && fn < c.code_hi ? fn : 0;
}

void write_counts(const Copy& c) noexcept {
    // libgomp reads the counts with a plain load at every wait: an aligned 8-byte store is seen
    // whole, at the next wait or the one after. Both counts: libgomp spins the throttled one
    // whenever its threads outnumber the CPUs it saw at its start (OMP_NUM_THREADS above the
    // cores, nested teams, several threads forking teams): 16 threads on one CPU spun 100 rounds
    // per wait, 3 of a scikit-learn fit's 8 s (tests/real/sklearn_work.py 20000 100).
    __atomic_store_n(c.spin, g_shared ? 0 : g_default, __ATOMIC_RELAXED);
    if (c.throttled) __atomic_store_n(c.throttled, g_shared ? 0 : c.throttled_default, __ATOMIC_RELAXED);
}

// The load addresses of the objects loaded now (at most kMaxSeen).
struct Loaded {
    int n = 0;
    std::uintptr_t base[kMaxSeen];
    bool has(std::uintptr_t b) const noexcept {
        for (int i = 0; i < n; ++i)
            if (base[i] == b) return true;
        return false;
    }
};

int list_loaded(dl_phdr_info* info, size_t, void* arg) {
    auto* l = static_cast<Loaded*>(arg);
    if (l->n < kMaxSeen) l->base[l->n++] = info->dlpi_addr;
    return 0;
}

// Something was unloaded: forget the copies and objects that are gone (never write into memory
// that is no longer libgomp's; a new object may come at the same address).
void forget_unloaded() noexcept {
    static Loaded now;  // 16 KB: not on the controller's stack
    now.n = 0;
    dl_iterate_phdr(list_loaded, &now);
    int kept = 0;
    for (int i = 0; i < g_ncopies; ++i)
        if (now.has(g_copies[i].base)) g_copies[kept++] = g_copies[i];
    g_ncopies = kept;
    kept = 0;
    for (int i = 0; i < g_nseen; ++i)
        if (now.has(g_seen[i])) g_seen[kept++] = g_seen[i];
    g_nseen = kept;
}

// Looks at the objects loaded since the last look; a libgomp among them gets its counts found.
void look_for_copies() noexcept {
    static Look l;  // 34 KB: not on the controller's stack (candidates are written before read)
    l.self = 0;
    l.adds = l.subs = 0;
    l.n = 0;
    l.adds_only = true;
    dl_iterate_phdr(look_object, &l);
    if (l.subs != g_subs) {
        forget_unloaded();
        g_subs = l.subs;
    }
    if (l.adds != 0 && l.adds == g_adds) return;  // nothing loaded since (0: unknown, look)
    unsigned long long adds = l.adds;
    Dl_info self;
    link_map* own = nullptr;  // l_addr: what dl_iterate_phdr calls dlpi_addr
    if (dladdr1(reinterpret_cast<void*>(&look_for_copies), &self, reinterpret_cast<void**>(&own), RTLD_DL_LINKMAP) && own)
        l.self = own->l_addr;
    l.adds_only = false;
    l.n = 0;
    dl_iterate_phdr(look_object, &l);
    for (int i = 0; i < l.n; ++i) {
        const Candidate& c = l.found[i];
        if (g_nseen < kMaxSeen) g_seen[g_nseen++] = c.base;
        std::uintptr_t code = own_gomp_parallel(c);
        if (!code || g_ncopies == kMaxCopies) continue;
        Search s;
        s.code = code;
        s.spin = g_default;
        s.throttled = std::min(kLibgompThrottled, g_default);
        dl_iterate_phdr(search_object, &s);
        if (s.found != 1) {
            host().log(Host::Severity::info,
                       "libgomp's spin-wait count not found in %s's memory (%d candidates): its threads spin %llu "
                       "rounds per wait even where confinement has them share CPUs",
                       c.name, s.found, g_default);
            continue;
        }
        Copy& copy = g_copies[g_ncopies++];
        copy = Copy{c.base, s.where, s.throttled_at, s.throttled};
        if (g_shared) write_counts(copy);
    }
    if (l.n < kMaxNew) g_adds = adds;  // else more to look at next cycle
}

}  // namespace

void gomp_spin_follow(bool shared) noexcept {
    if (g_off) return;
    if (!g_defaulted) {
        g_defaulted = true;
        g_default = shim_gomp_spin_count();
        g_off = g_default == 0;  // the user's waiting, kept as chosen
        if (g_off) return;
    }
    look_for_copies();
    if (shared == g_shared) return;
    g_shared = shared;
    for (int i = 0; i < g_ncopies; ++i) write_counts(g_copies[i]);
}

}  // namespace apshim::omp_adapter
