// The little of oneTBB 2021's binary interface the shim relies on, written once, so the shim
// builds without TBB's headers and links no libtbb (it must be a no-op in programs without TBB).
// Checked against Debian's libtbb12 2021.8 (global_control.h, the exported r1:: entry points).
#pragma once

#include <cstddef>
#include <cstdint>

namespace apshim::tbb_abi {

// tbb::detail::d1::global_control (global_control.h): the program's controls, which the hooks
// see passing through r1::create/destroy, and the shim's own, which it creates with them.
struct GlobalControl {
    std::size_t value;
    std::intptr_t reserved;
    int param;
};
constexpr int kMaxAllowedParallelism = 0;  // GlobalControl::param

// tbb::detail::d1::wait_context (_task.h): what a wait in r1::wait waits for. Its first word is
// its version and traits (1 in oneTBB 2021), the second the count of what it waits for, which
// falls to 0 (then notify_waiters) when the wait is over.
struct WaitContext {
    std::uint64_t version_and_traits;
    std::uint64_t ref_count;  // a std::atomic<std::uint64_t> in TBB: read with __atomic_load_n
};
constexpr std::uint64_t kWaitContextVersion = 1;

}  // namespace apshim::tbb_abi

// Mangled names of the tbb::detail::r1 entry points: macros, because the interposers take them as
// asm labels (string literals only).
// void r1::wait(d1::wait_context&, d1::task_group_context&)
#define APSHIM_TBB_WAIT "_ZN3tbb6detail2r14waitERNS0_2d112wait_contextERNS2_18task_group_contextE"
// void r1::execute_and_wait(d1::task&, d1::task_group_context&, d1::wait_context&, d1::task_group_context&)
#define APSHIM_TBB_EXECUTE_AND_WAIT \
    "_ZN3tbb6detail2r116execute_and_waitERNS0_2d14taskERNS2_18task_group_contextERNS2_12wait_contextES6_"
// void r1::create(d1::global_control&), void r1::destroy(d1::global_control&)
#define APSHIM_TBB_GC_CREATE "_ZN3tbb6detail2r16createERNS0_2d114global_controlE"
#define APSHIM_TBB_GC_DESTROY "_ZN3tbb6detail2r17destroyERNS0_2d114global_controlE"
// void r1::notify_waiters(std::uintptr_t wait_ctx_addr): d1::wait_context calls it when its count
// reaches 0 (_task.h, add_reference)
#define APSHIM_TBB_NOTIFY_WAITERS "_ZN3tbb6detail2r114notify_waitersEm"
// bool r1::finalize(d1::task_scheduler_handle&, std::intptr_t mode)
#define APSHIM_TBB_FINALIZE "_ZN3tbb6detail2r18finalizeERNS0_2d121task_scheduler_handleEl"

// ittnotify's loader (ittnotify_static.c / ittnotify_config.h, compiled into libtbb and libomp):
// the head of its global, which it passes to a collector's __itt_api_init (lib_version 2), and
// the entries of its table of API function pointers. The same in oneTBB 2021 and LLVM's libomp 14.
#include <pthread.h>

namespace apshim::itt_abi {

#pragma pack(push, 8)
struct ApiInfo {
    const char* name;  // "__itt_stack_callee_enter", ...
    void** func_ptr;   // the loader's pointer that the runtime calls through
    void* init_func;
    void* null_func;   // the pointer's value without a collector (null, or the loader's own code)
    int group;
};

struct Global {
    unsigned char magic[8];
    unsigned long version_major, version_minor, version_build;
    volatile long api_initialized, mutex_initialized, atomic_counter;
    pthread_mutex_t mutex;
    void* lib;
    void* error_handler;
    const char** dll_path_ptr;
    ApiInfo* api_list;  // ends with an entry whose name is null
};
#pragma pack(pop)

inline constexpr unsigned char kMagic[8] = {0xED, 0xAB, 0xAB, 0xEC, 0x0D, 0xEE, 0xDA, 0x30};

}  // namespace apshim::itt_abi
