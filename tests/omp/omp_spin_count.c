/* libgomp's spin-wait counts as libgomp itself reads them, before each of many short regions (gcc
 * build only). Finds the count the way adapters/omp/gomp_spin.cpp does, independently: in
 * libgomp's writable data, the value of GOMP_SPINCOUNT beside libgomp's count for
 * oversubscription (100), which is read too (libgomp spins that one while its threads outnumber
 * the CPUs it saw at its start). Nothing in it knows about the shim.
 *   omp_spin_count SECONDS
 * stdout: "spin_count found=<candidates> start=<v> min=<v> max=<v> tstart=<v> tmin=<v> tmax=<v>
 * regions=<n> checksum=<c>" (t: the oversubscription count; -1 where both neighbours hold 100),
 * or "spin_count unset" when GOMP_SPINCOUNT is not in the environment. */
#define _GNU_SOURCE
#include <link.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spin.h"

typedef unsigned long long Count;

static Count want;
static int found;
static volatile Count* where;
static volatile Count* twhere; /* the oversubscription count beside it */

static int search(struct dl_phdr_info* info, size_t size, void* arg) {
    (void)size, (void)arg;
    if (!info->dlpi_name || !strstr(info->dlpi_name, "libgomp")) return 0;
    uintptr_t relro = 0, relro_size = 0;
    for (int i = 0; i < info->dlpi_phnum; ++i)
        if (info->dlpi_phdr[i].p_type == PT_GNU_RELRO)
            relro = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr, relro_size = info->dlpi_phdr[i].p_memsz;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr)* ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W)) continue;
        uintptr_t begin = (info->dlpi_addr + ph->p_vaddr + 7) & ~(uintptr_t)7, end = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
        Count throttled = want < 100 ? want : 100;
        for (uintptr_t a = begin; a + 8 <= end; a += 8) {
            if (a >= relro && a - relro < relro_size) continue;
            const Count* w = (const Count*)a;
            if (*w != want) continue;
            int before = a >= begin + 8 && w[-1] == throttled, after = a + 16 <= end && w[1] == throttled;
            if ((before || after) && found++ == 0) {
                where = (volatile Count*)a;
                twhere = before && after ? NULL : (volatile Count*)a + (before ? -1 : 1);
            }
        }
    }
    return 1;
}

int main(int argc, char** argv) {
    double seconds = argc > 1 ? atof(argv[1]) : 1.0;
    const char* env = getenv("GOMP_SPINCOUNT");
    if (!env) {
        printf("spin_count unset\n");
        return 0;
    }
    want = strtoull(env, NULL, 10);
#pragma omp parallel
    spin_us(1, 10); /* libgomp started, its pool made */
    dl_iterate_phdr(search, NULL);
    if (found != 1) {
        printf("spin_count found=%d\n", found);
        return 0;
    }
    Count start = *where, lo = start, hi = start;
    long long tstart = twhere ? (long long)*twhere : -1, tlo = tstart, thi = tstart;
    unsigned long long checksum = 0, regions = 0;
    double t0 = now();
    while (now() - t0 < seconds) {
        /* Short regions a few microseconds apart (scikit-learn's gradient boosting). */
        for (int k = 0; k < 100; ++k, ++regions) {
#pragma omp parallel for schedule(static) reduction(+ : checksum)
            for (int i = 0; i < 64; ++i) checksum += spin_us((uint64_t)i + regions, 1);
            Count now_count = *where;
            if (now_count < lo) lo = now_count;
            if (now_count > hi) hi = now_count;
            if (twhere) {
                long long t = (long long)*twhere;
                if (t < tlo) tlo = t;
                if (t > thi) thi = t;
            }
        }
    }
    printf("spin_count found=%d start=%llu min=%llu max=%llu tstart=%lld tmin=%lld tmax=%lld regions=%llu checksum=%llu\n",
           found, start, lo, hi, tstart, tlo, thi, regions, checksum);
    return 0;
}
