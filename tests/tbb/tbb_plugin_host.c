// Links no oneTBB: loads PLUGIN with dlopen(RTLD_LOCAL) and calls its plugin_sum ROUNDS times.
// PLUGIN may be several, comma-separated: each is loaded and run in turn (one runtime started,
// then another loaded: tests/mixed/test_late_tbb.py).
//   tbb_plugin_host PLUGIN[,PLUGIN...] ROUNDS ITEMS ITEM_US [thread-first]
//   thread-first: a thread of its own is created and joined before the plugin is loaded (the
//   shim then looks for libtbb before there is one, and must still know TBB's workers later).
// stdout: "tbb_plugin_host sum=<s>"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void* nothing(void* arg) { return arg; }

int main(int argc, char** argv) {
    if (argc != 5 && argc != 6) {
        fprintf(stderr, "usage: tbb_plugin_host PLUGIN ROUNDS ITEMS ITEM_US [thread-first]\n");
        return 2;
    }
    if (argc == 6 && strcmp(argv[5], "thread-first") == 0) {
        pthread_t t;
        if (pthread_create(&t, NULL, nothing, NULL) != 0 || pthread_join(t, NULL) != 0) return 5;
    }
    long long total = 0;
    for (char* plugin = strtok(argv[1], ","); plugin; plugin = strtok(NULL, ",")) {
        void* h = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            fprintf(stderr, "%s\n", dlerror());
            return 3;
        }
        long long (*sum)(long long, int) = (long long (*)(long long, int))dlsym(h, "plugin_sum");
        if (!sum) return 4;
        for (int r = 0; r < atoi(argv[2]); ++r) total += sum(atoll(argv[3]), atoi(argv[4]));
    }
    printf("tbb_plugin_host sum=%lld\n", total);
    return 0;
}
