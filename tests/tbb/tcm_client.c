/* A thread-composability (TCM) client that asks for workers the way oneTBB 2021.11+ does
 * (src/tbb/tcm_adaptor.cpp): connect with a callback, request an inactive permit, then ask for
 * [0, MAX] workers, and read the permit back in the callback. No TBB: the tcm* functions come
 * from whatever the process has (the preloaded shim), looked up at run time.
 *   tcm_client MAX MS
 * stdout, every 50 ms for MS ms: "t=<ms> granted=<n> callbacks=<k>", or one line "no TCM" /
 * "connect refused". */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int tcm_result_t;
typedef struct { uint32_t stale : 1, rigid_concurrency : 1, exclusive : 1, request_as_inactive : 1, reserved : 28; } flags_t;
typedef struct { uint32_t new_concurrency : 1, new_state : 1, reserved : 30; } cb_flags_t;
typedef struct { uint32_t* concurrencies; void** cpu_masks; uint32_t size; uint8_t state; flags_t flags; } permit_t;
typedef struct { int32_t min_sw_threads, max_sw_threads; void* cpu_constraints; uint32_t constraints_size; int32_t priority; flags_t flags; char reserved[4]; } request_t;
typedef void* handle_t;
typedef tcm_result_t (*callback_t)(handle_t, void*, cb_flags_t);

static tcm_result_t (*get_data)(handle_t, permit_t*);
static atomic_uint granted, callbacks;

static tcm_result_t on_change(handle_t h, void* arg, cb_flags_t f) {
    (void)arg;
    (void)f;
    uint32_t c = 0;
    permit_t p = {&c, NULL, 1, 0, {0}};
    if (get_data(h, &p) == 0) atomic_store(&granted, p.state != 1 /* inactive */ ? c : 0);
    atomic_fetch_add(&callbacks, 1);
    return 0;
}

int main(int argc, char** argv) {
    int max = argc > 1 ? atoi(argv[1]) : 3, ms = argc > 2 ? atoi(argv[2]) : 2000;
    tcm_result_t (*connect)(callback_t, uint64_t*) = (tcm_result_t(*)(callback_t, uint64_t*))dlsym(RTLD_DEFAULT, "tcmConnect");
    tcm_result_t (*request)(uint64_t, request_t, void*, handle_t*, permit_t*) =
        (tcm_result_t(*)(uint64_t, request_t, void*, handle_t*, permit_t*))dlsym(RTLD_DEFAULT, "tcmRequestPermit");
    tcm_result_t (*release)(handle_t) = (tcm_result_t(*)(handle_t))dlsym(RTLD_DEFAULT, "tcmReleasePermit");
    tcm_result_t (*disconnect)(uint64_t) = (tcm_result_t(*)(uint64_t))dlsym(RTLD_DEFAULT, "tcmDisconnect");
    get_data = (tcm_result_t(*)(handle_t, permit_t*))dlsym(RTLD_DEFAULT, "tcmGetPermitData");
    if (!connect || !request || !release || !disconnect || !get_data) return puts("no TCM"), 0;
    uint64_t id = 0;
    if (connect(on_change, &id) != 0) return puts("connect refused"), 0;
    request_t r;
    memset(&r, 0, sizeof r);
    r.min_sw_threads = r.max_sw_threads = 0;
    r.flags.request_as_inactive = 1;
    handle_t h = NULL;
    if (request(id, r, NULL, &h, NULL) != 0) return puts("request failed"), 1;
    r.flags.request_as_inactive = 0;
    r.max_sw_threads = max;
    if (request(id, r, NULL, &h, NULL) != 0) return puts("request failed"), 1;
    on_change(h, NULL, (cb_flags_t){0});  /* TBB reads its permit right after a request */
    atomic_store(&callbacks, 0);
    for (int t = 0; t <= ms; t += 50) {
        printf("t=%d granted=%u callbacks=%u\n", t, atomic_load(&granted), atomic_load(&callbacks));
        fflush(stdout);
        struct timespec d = {0, 50 * 1000000L};
        nanosleep(&d, NULL);
    }
    release(h);
    disconnect(id);
    return 0;
}
