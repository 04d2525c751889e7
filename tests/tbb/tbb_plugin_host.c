// Links no oneTBB: loads PLUGIN with dlopen(RTLD_LOCAL) and calls its plugin_sum ROUNDS times.
//   tbb_plugin_host PLUGIN ROUNDS ITEMS ITEM_US     stdout: "tbb_plugin_host sum=<s>"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: tbb_plugin_host PLUGIN ROUNDS ITEMS ITEM_US\n");
        return 2;
    }
    void* h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "%s\n", dlerror());
        return 3;
    }
    long long (*sum)(long long, int) = (long long (*)(long long, int))dlsym(h, "plugin_sum");
    if (!sum) return 4;
    long long total = 0;
    for (int r = 0; r < atoi(argv[2]); ++r) total += sum(atoll(argv[3]), atoi(argv[4]));
    printf("tbb_plugin_host sum=%lld\n", total);
    return 0;
}
