/* A host that links no OpenMP runtime (Python) and loads modules with dlopen(RTLD_LOCAL), in the
 * order given: omp_copies_host ROUNDS MODULE... Each round calls every module's mod_probe()
 * (omp_copies_mod.c), with a millisecond's pause between rounds so that the shim's controller
 * samples a few cycles. Prints each module's answer once (the first, and any that differs from
 * the right one); exits 1 if any answer was wrong. Modules that export mod_spin() (gcc) are asked
 * for their libgomp's spin count after every round; the last answer goes to stderr,
 * "module <i> spin=<min>-<max>". */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int (*Probe)(char*, int);

int main(int argc, char** argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s ROUNDS MODULE...\n", argv[0]);
        return 2;
    }
    static const char kRight[] = "tid=0,1 nth=2,2 sum=500500 singles=1";
    int rounds = atoi(argv[1]), n = argc - 2, wrong = 0;
    char spin[16][64];
    Probe probes[16], spins[16];
    if (n > 16) return 2;
    for (int i = 0; i < n; ++i) {
        void* h = dlopen(argv[i + 2], RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            fprintf(stderr, "%s\n", dlerror());
            return 2;
        }
        probes[i] = (Probe)dlsym(h, "mod_probe");
        spins[i] = (Probe)dlsym(h, "mod_spin");
        if (!probes[i]) return 2;
    }
    for (int r = 0; r < rounds; ++r) {
        for (int i = 0; i < n; ++i) {
            char buf[200];
            probes[i](buf, sizeof buf);
            int right = strcmp(buf, kRight) == 0;
            if (r == 0 || !right) printf("module %d round %d: %s\n", i, r, buf);
            wrong += !right;
            if (spins[i]) spins[i](spin[i], sizeof spin[i]);
        }
        usleep(1000);
    }
    for (int i = 0; i < n; ++i)
        if (spins[i]) fprintf(stderr, "module %d %s\n", i, spin[i]);
    printf("%d wrong answers\n", wrong);
    return wrong ? 1 : 0;
}
