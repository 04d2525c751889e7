#include "shim/process_cpu.hpp"

#include <time.h>

#include "adapters/common/clock.hpp"
#include "gat/proc.hpp"
#include "shim/confine.hpp"

namespace apshim {

namespace {

// The process's CPU clock (0 where it cannot be read, which it always can).
std::uint64_t process_clock_ns() noexcept {
    std::uint64_t ns = 0;
    read_clock_ns(CLOCK_PROCESS_CPUTIME_ID, ns);
    return ns;
}

// The CPU clock of thread `tid` of this process: the kernel's MAKE_THREAD_CPUCLOCK(tid,
// CPUCLOCK_SCHED), what pthread_getcpuclockid gives for a pthread_t (we know threads by tid).
clockid_t thread_clock(pid_t tid) noexcept {
    return static_cast<clockid_t>((~static_cast<unsigned>(tid) << 3) | 6u);
}

}  // namespace

std::uint64_t ProcessCpu::read_ns() noexcept {
    if (!exact_) return process_clock_ns();
    unsigned created = confine::threads_created();
    bool listing = !listed_ || created != created_seen_ || ++reads_ >= kRelistReads;
    if (listing) {
        try {
            tids_ = gat::self_threads();
        } catch (...) {
            tids_.clear();  // no memory: the process clock alone, late as it may be
        }
        listed_ = true;
        created_seen_ = created;
        reads_ = 0;
    }
    std::size_t read = 0;
    for (pid_t tid : tids_) {
        std::uint64_t ns;
        if (read_clock_ns(thread_clock(tid), ns)) ++read;  // brings the thread's run time up to date
        else listed_ = false;  // it ended: list again next time
    }
    // Not one thread of a fresh listing could be read, this one's included: the ids /proc gives
    // are not this process's (a /proc of another pid namespace). The process clock alone then,
    // rather than listing again at every reading.
    if (listing && !tids_.empty() && read == 0) exact_ = false;
    return process_clock_ns();
}

}  // namespace apshim
