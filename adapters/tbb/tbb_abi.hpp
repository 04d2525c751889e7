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
// bool r1::finalize(d1::task_scheduler_handle&, std::intptr_t mode)
#define APSHIM_TBB_FINALIZE "_ZN3tbb6detail2r18finalizeERNS0_2d121task_scheduler_handleEl"
