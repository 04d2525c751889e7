// The process's CPU time, every thread's counted up to the moment it is read.
//
// CLOCK_PROCESS_CPUTIME_ID sums each thread's run time as the scheduler last accounted it: at a
// switch, or at the kernel's tick for a thread that keeps its CPU (every 4 ms at HZ=250, the
// lent 16-core machine's and this one's); since Linux 4.8 only the reading thread's own is
// brought up to date (commit a1eb1411b4e4, for the call's scalability). So it counts a job whose threads each run on a CPU of
// their own, as an unconfined one does, late by up to a tick of each: on 16 CPUs up to 60 ms of
// CPU time, four times a probe's whole bound (15 ms beyond its CPUs, confine_check.hpp). The
// controller's 1 ms peeks saw a window spent only once a tick had counted it, and at allotment 1
// of 16 a probe ran its whole 5 ms cycle, 45-120 ms of CPU, where it should end within a peek of
// its bound (bench/results/2026-12-05e-device16core). And a confirmation, whose cycles alternate
// confined and unconfined, had part of each unconfined cycle's CPU counted in the confined one
// after it. Reading a thread's own CPU clock brings its run time up to date (the kernel's
// task_sched_runtime updates a running thread's), so the process clock read after every
// thread's is exact: 1-2 us for 8 threads on this machine.
//
// Controller thread only. The threads are listed (/proc/self/task) at the first reading, after a
// thread was created through pthread_create (confine::threads_created), when one could not be
// read (it ended), and every kRelistReads readings for threads cloned without it; a thread missed
// meanwhile is only counted late, as by the process clock alone, which is also all it reads where
// not one listed thread's clock can be read (a /proc of another pid namespace).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <vector>

namespace apshim {

class ProcessCpu {
public:
    std::uint64_t read_ns() noexcept;

    static constexpr unsigned kRelistReads = 64;

private:
    std::vector<pid_t> tids_;
    bool exact_ = true;  // false where the listed threads' clocks cannot be read (read_ns)
    bool listed_ = false;
    unsigned created_seen_ = 0;
    unsigned reads_ = 0;
};

}  // namespace apshim
