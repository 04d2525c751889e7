/* libgomp's two spin-wait counts, found in its memory the way adapters/omp/gomp_spin.cpp finds
 * them, independently (gcc test programs only; nothing here knows about the shim): in the
 * writable data (outside RELRO) of one libgomp object, the value `want` (GOMP_SPINCOUNT as libgomp
 * read it) with libgomp's count for oversubscription (100, or `want` where lower) next to it or
 * one variable away (PyPI wheels' GCC 8 libgomp). Call before the shim can have changed them
 * (before its first controller cycle, or where it leaves them); read them through the pointers
 * after. */
#ifndef APSHIM_TESTS_OMP_GOMP_COUNTS_H
#define APSHIM_TESTS_OMP_GOMP_COUNTS_H
#include <link.h>
#include <stdint.h>
#include <string.h>

typedef unsigned long long GompCount;

typedef struct {
    uintptr_t base;                /* the object to search (0: the first whose name holds "libgomp") */
    GompCount want;
    int found;                     /* candidates */
    volatile GompCount* spin;      /* the first one */
    volatile GompCount* throttled; /* its neighbour (NULL: two neighbours hold 100) */
} GompCounts;

static int gomp_counts_search_(struct dl_phdr_info* info, size_t size, void* arg) {
    GompCounts* g = (GompCounts*)arg;
    (void)size;
    if (g->base ? info->dlpi_addr != g->base : !(info->dlpi_name && strstr(info->dlpi_name, "libgomp"))) return 0;
    uintptr_t relro = 0, relro_size = 0;
    for (int i = 0; i < info->dlpi_phnum; ++i)
        if (info->dlpi_phdr[i].p_type == PT_GNU_RELRO)
            relro = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr, relro_size = info->dlpi_phdr[i].p_memsz;
    GompCount throttled = g->want < 100 ? g->want : 100;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr)* ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W)) continue;
        uintptr_t begin = (info->dlpi_addr + ph->p_vaddr + 7) & ~(uintptr_t)7, end = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
        for (uintptr_t a = begin; a + 8 <= end; a += 8) {
            if ((a >= relro && a - relro < relro_size) || *(const GompCount*)a != g->want) continue;
            int beside = 0, at = 0;
            for (int k = -2; k <= 2; ++k) {
                uintptr_t b = a + (uintptr_t)((intptr_t)k * 8);
                if (k == 0 || b < begin || b + 8 > end || (b >= relro && b - relro < relro_size)) continue;
                if (*(const GompCount*)b == throttled) ++beside, at = k;
            }
            if (beside && g->found++ == 0) {
                g->spin = (volatile GompCount*)a;
                g->throttled = beside == 1 ? (volatile GompCount*)a + at : NULL;
            }
        }
    }
    return 1;
}

static inline GompCounts gomp_counts_find(uintptr_t base, GompCount want) {
    GompCounts g = {base, want, 0, NULL, NULL};
    dl_iterate_phdr(gomp_counts_search_, &g);
    return g;
}
/* The same, or else the pair holding libgomp's own default (300 000, what it holds without
 * GOMP_SPINCOUNT): a caller that may come after the shim's first cycle finds the counts where the
 * shim already restored that default for a job nobody waits for (adapters/omp/gomp_spin.cpp). */
static inline GompCounts gomp_counts_find_or_default(uintptr_t base, GompCount want) {
    GompCounts g = gomp_counts_find(base, want);
    return g.found ? g : gomp_counts_find(base, 300000);
}
#endif
