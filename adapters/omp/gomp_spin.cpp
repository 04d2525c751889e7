// libgomp's spin-wait count, lowered while confinement shares the job's CPUs (gomp_spin.hpp).
#include "adapters/omp/gomp_spin.hpp"

#include <link.h>

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "adapters/adapter.hpp"

namespace apshim::omp_adapter {
namespace {

using Count = unsigned long long;  // libgomp's gomp_spin_count_var and gomp_throttled_spin_count_var

// libgomp's count for more threads than CPUs when no wait policy is set (its env.c: 100, or the
// spin count where that is lower): found beside the spin count itself.
constexpr Count kLibgompThrottled = 100;

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
            bool before = a >= begin + sizeof(Count) && w[-1] == s->throttled;
            bool after = a + 2 * sizeof(Count) <= end && w[1] == s->throttled;
            if (!before && !after) continue;
            if (s->found++ == 0) {
                s->where = reinterpret_cast<Count*>(a);
                s->throttled_at = before && after ? nullptr : s->where + (before ? -1 : 1);
            }
        }
    }
    return 1;  // stop: libgomp searched
}

enum class Where { not_yet, found, absent };
std::atomic<Where> g_where{Where::not_yet};
Count* g_count = nullptr;      // libgomp's gomp_spin_count_var once found (controller thread only)
Count* g_throttled = nullptr;  // its gomp_throttled_spin_count_var (null: not told apart)
Count g_default = 0;           // what libgomp read at its start (the shim's default)
Count g_throttled_default = 0; // and the count it derived for oversubscription
Count g_now = 0;               // what the shim last wrote there

bool locate() noexcept {
    Where w = g_where.load(std::memory_order_acquire);
    if (w != Where::not_yet) return w == Where::found;
    void* code = real_gomp_parallel();
    if (!code) return false;  // libgomp not loaded (yet): ask again next cycle
    g_default = shim_gomp_spin_count();
    if (g_default == 0) {
        g_where.store(Where::absent, std::memory_order_release);  // the user's waiting, kept as chosen
        return false;
    }
    Search s;
    s.code = reinterpret_cast<std::uintptr_t>(code);
    s.spin = g_default;
    s.throttled = std::min(kLibgompThrottled, g_default);
    dl_iterate_phdr(search_object, &s);
    if (s.found != 1) {
        host().log(Host::Severity::info,
                   "libgomp's spin-wait count not found in its memory (%d candidates): its threads spin %llu rounds "
                   "per wait even where confinement has them share CPUs",
                   s.found, g_default);
        g_where.store(Where::absent, std::memory_order_release);
        return false;
    }
    g_count = s.where;
    g_throttled = s.throttled_at;
    g_throttled_default = s.throttled;
    g_now = g_default;
    g_where.store(Where::found, std::memory_order_release);
    return true;
}

}  // namespace

void gomp_spin_follow(bool shared) noexcept {
    if (!locate()) return;
    Count want = shared ? 0 : g_default;
    if (want == g_now) return;
    // libgomp reads the count with a plain load at every wait: an aligned 8-byte store is seen
    // whole, at the next wait or the one after. Both counts: libgomp spins the throttled one
    // whenever its threads outnumber the CPUs it saw at its start (OMP_NUM_THREADS above the
    // cores, nested teams, several threads forking teams): 16 threads on one CPU spun 100 rounds
    // per wait, 3 of a scikit-learn fit's 8 s (tests/real/sklearn_work.py 20000 100).
    __atomic_store_n(g_count, want, __ATOMIC_RELAXED);
    if (g_throttled) __atomic_store_n(g_throttled, shared ? 0 : g_throttled_default, __ATOMIC_RELAXED);
    g_now = want;
}

}  // namespace apshim::omp_adapter
