// libc's sched_yield, interposed for one caller: a libomp thread in its region's barrier. libomp
// in its default "throughput" mode yields there after every task it ran (and in its spin loops),
// through the PLT; where parking is the only hold, that is where a thread beyond the
// allotment waits (parking.hpp: yield_in_region, wait_in_barrier), and the yield itself, one
// system call per task, is kept from the kernel. A caller outside libomp's regions (the program's
// serial code, oneTBB's spin-waits, OpenBLAS's, the shim's own) costs one thread-local load more
// than libc's.
#include <sys/syscall.h>
#include <unistd.h>

#include "adapters/common/next_fn.hpp"
#include "adapters/omp/omp_state.hpp"
#include "adapters/omp/parking.hpp"
#include "adapters/omp/thread_state.hpp"

namespace {
apshim::NextFn<int (*)()> next_sched_yield{"sched_yield"};
APSHIM_RESOLVE_AT_LOAD(next_sched_yield)
}  // namespace

extern "C" __attribute__((visibility("default"))) int sched_yield() {
    using namespace apshim::omp_adapter;
    if (ThreadState& t = kmp_thread_state(); t.level > 0) [[unlikely]]
        if (yield_in_region(g_kmp_state, t)) return 0;
    if (auto real = next_sched_yield.get()) return real();
    return static_cast<int>(syscall(SYS_sched_yield));  // no libc after us: the call itself
}
