#include "shim/process_cpu.hpp"

#include <time.h>

#include "gat/proc.hpp"
#include "shim/confine.hpp"

namespace apshim {

namespace {

std::uint64_t clock_ns(clockid_t clock, bool* ok = nullptr) noexcept {
    timespec ts{};
    bool read = clock_gettime(clock, &ts) == 0;
    if (ok) *ok = read;
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

// The CPU clock of thread `tid` of this process: the kernel's MAKE_THREAD_CPUCLOCK(tid,
// CPUCLOCK_SCHED), what pthread_getcpuclockid gives for a pthread_t (we know threads by tid).
clockid_t thread_clock(pid_t tid) noexcept {
    return static_cast<clockid_t>((~static_cast<unsigned>(tid) << 3) | 6u);
}

}  // namespace

std::uint64_t ProcessCpu::read_ns() noexcept {
    if (!exact_) return clock_ns(CLOCK_PROCESS_CPUTIME_ID);
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
        bool ok = false;
        clock_ns(thread_clock(tid), &ok);  // brings the thread's run time up to date
        if (ok) ++read;
        else listed_ = false;  // it ended: list again next time
    }
    // Not one thread of a fresh listing could be read, this one's included: the ids /proc gives
    // are not this process's (a /proc of another pid namespace). The process clock alone then,
    // rather than listing again at every reading.
    if (listing && !tids_.empty() && read == 0) exact_ = false;
    return clock_ns(CLOCK_PROCESS_CPUTIME_ID);
}

}  // namespace apshim
