// What the table needs to know about processes: identity that survives pid reuse, and liveness.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <vector>

namespace apshim::gat {

struct ProcInfo {
    bool exists = false;      // /proc/<pid>/stat readable
    bool zombie = false;      // state Z or X: dead, not yet reaped
    char state = 0;           // field 3: R, S, T (stopped), t (stopped by a tracer), ...
    std::uint64_t start_time = 0;
};

// Reads /proc/<pid>/stat (state and field 22, starttime in clock ticks since boot). A thread id
// reads that thread's (/proc/<tid> exists for every thread, listed or not), but the kernel answers
// /proc/<tid>/stat as a process's (do_task_stat's `whole`): it sums every thread of the process,
// so a read costs in proportion to the process's threads.
ProcInfo read_proc(pid_t pid);

// The same for a thread of this process, from /proc/self/task/<tid>/stat: that thread's alone, at
// the same cost however many threads the process has. Reading all 1000 threads of a process with
// /proc/<tid>/stat took the trace's controller 60-100 ms a row (seventy-seventh session).
ProcInfo read_own_thread(pid_t tid);

// The time thread `tid` has run on a CPU, ns (/proc/<tid>/schedstat's first field); 0 when
// unreadable (a kernel without schedstats).
std::uint64_t thread_run_ns(pid_t tid);

// This process's threads (/proc/self/task); none, and *readable false, where that cannot be read
// (no /proc: a container or a chroot without it, or a program that chroot()s itself).
std::vector<pid_t> self_threads(bool* readable = nullptr);

// Whether thread `tid` belongs to process `pid` (/proc/<pid>/task/<tid> exists).
bool thread_of(pid_t pid, pid_t tid);

// A row's owner is alive iff its pid exists, is not a zombie, and started when the row says.
bool process_alive(pid_t pid, std::uint64_t start_time);

// Cheap check (one syscall): false only when the pid certainly does not exist any more.
bool pid_exists(pid_t pid);

// This process's comm (short name), for the table's name column.
void self_name(char* out, int len);

}  // namespace apshim::gat
