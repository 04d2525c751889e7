#include "shim/trace.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "gat/proc.hpp"
#include "shim/log.hpp"

namespace apshim {

bool Trace::open(const std::string& pattern) {
    std::string path;
    for (std::size_t i = 0; i < pattern.size(); ++i) {
        if (pattern[i] == '%' && i + 1 < pattern.size() && pattern[i + 1] == 'p') {
            path += std::to_string(getpid());
            ++i;
        } else {
            path += pattern[i];
        }
    }
    file_ = std::fopen(path.c_str(), "we");
    if (!file_) {
        log(LogLevel::warn, "cannot write trace %s: %s; tracing off", path.c_str(), std::strerror(errno));
        return false;
    }
    std::fputs("time_ms,desire,allotment,usage,inefficiency,busy,cpus,threads_running,measure,confine_check,marks,idle_check,region_ends,width_check,cpu_ms\n", file_);
    std::fflush(file_);
    return true;
}

void Trace::write(const TraceRow& r) {
    if (!file_) return;
    std::fprintf(file_, "%.3f,%d,%d,%d,%.4f,%.3f,%d,%d,%s,%s,%llu,%s,%llu,%s,%.3f\n", r.time_ms, r.desire, r.allotment,
                 r.usage, r.inefficiency, r.busy, r.cpus, r.threads_running, r.measure, r.confine_check,
                 static_cast<unsigned long long>(r.marks), r.idle_check, static_cast<unsigned long long>(r.region_ends), r.width_check,
                 r.cpu_ms);
    std::fflush(file_);  // a killed job still leaves its rows behind
}

int threads_running() noexcept {
    // Each state is a /proc read: a process of 512 threads (oneTBB's test_collaborative_call_once)
    // spent a CPU of its own on them, 0.85 s of system time in a 0.86 s run, traced at allotment 1
    // of 2 (1.86 CPUs against 1.03 untraced): the trace, which measures the job, must not cost it
    // that. Beyond kStatesPerRow threads the states are read every few rows, as many rows apart as
    // the threads need kStatesPerRow-sized shares, and the rows between say -1 (without listing
    // the threads either: that too is a /proc read, of every thread's entry).
    static std::size_t rows_to_skip = 0;  // the controller thread only
    if (rows_to_skip > 0) {
        --rows_to_skip;
        return -1;
    }
    const std::vector<pid_t> tids = gat::self_threads();
    rows_to_skip = (tids.size() + kStatesPerRow - 1) / kStatesPerRow;
    if (rows_to_skip > 0) --rows_to_skip;  // this row reads
    const pid_t self = static_cast<pid_t>(syscall(SYS_gettid));  // the controller itself, running while it looks
    int running = 0;
    for (pid_t tid : tids)
        if (tid != self && gat::read_own_thread(tid).state == 'R') ++running;
    return running;
}

void Trace::close() {
    if (file_) std::fclose(file_);
    file_ = nullptr;
}

void Trace::abandon() {
    if (file_) {
        // The buffer is empty (every row is flushed); close the child's copy of the descriptor.
        ::close(fileno(file_));
    }
    file_ = nullptr;  // the FILE object itself leaks in the child: freeing it could touch a lock
}

}  // namespace apshim
