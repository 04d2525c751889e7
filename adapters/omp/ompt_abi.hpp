// The few OMPT types (OpenMP 5.0 API, omp-tools.h) the libomp adapter needs, declared here so
// the shim builds with g++ alone and links no OpenMP runtime. Values are fixed by the spec.
#pragma once

#include <cstdint>

namespace apshim::ompt {

union Data {
    std::uint64_t value;
    void* ptr;
};

using InterfaceFn = void (*)();
using Lookup = InterfaceFn (*)(const char* name);
using Callback = void (*)();
using Initialize = int (*)(Lookup lookup, int initial_device_num, Data* tool_data);
using Finalize = void (*)(Data* tool_data);

struct StartToolResult {
    Initialize initialize;
    Finalize finalize;
    Data tool_data;
};

enum CallbackId : int {
    parallel_begin = 3,
    parallel_end = 4,
    task_create = 5,
    task_schedule = 6,
    implicit_task = 7,
    sync_region_wait = 16
};
// ompt_sync_region_t values the adapter tells apart. libomp 14 reports every implicit barrier,
// a region's end and a worksharing loop's alike, as barrier_implicit (OpenMP 5.0's name); OpenMP
// 5.1's runtimes name the region's end barrier_implicit_parallel (and a loop's, 9, _workshare).
enum SyncKind : int { barrier_implicit = 2, barrier_implicit_parallel = 10 };
// The barriers (1 and 2 are OpenMP 5.0's names, which libomp 14 still reports), as opposed to
// taskwait (5), taskgroup (6) and reduction (7).
inline bool is_barrier(int sync_kind) noexcept {
    switch (sync_kind) {
    case 1: case 2: case 3: case 4: case 8: case 9: case 10: return true;
    default: return false;
    }
}
enum SetResult : int { set_error = 0, set_never = 1, set_always = 5 };
using SetCallback = int (*)(int event, Callback callback);

enum Endpoint : int { scope_begin = 1, scope_end = 2, scope_beginend = 3 };
enum TaskFlag : int { task_initial = 0x1, task_implicit = 0x2, task_explicit = 0x4 };
// ompt_get_task_info (an entry point the lookup gives): the task `ancestor_level` levels above
// the calling thread's current one; 2 where there is such a task.
using GetTaskInfo = int (*)(int ancestor_level, int* flags, Data** task_data, void** task_frame, Data** parallel_data,
                            int* thread_num);
enum TaskStatus : int {
    task_complete = 1,
    task_yield = 2,
    task_cancel = 3,
    task_detach = 4,
    task_early_fulfill = 5,
    task_late_fulfill = 6,
    task_switch = 7,
    taskwait_complete = 8,
};

}  // namespace apshim::ompt
