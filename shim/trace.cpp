#include "shim/trace.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>

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
    std::fputs("time_ms,desire,allotment,usage,inefficiency,busy\n", file_);
    std::fflush(file_);
    return true;
}

void Trace::write(const TraceRow& r) {
    if (!file_) return;
    std::fprintf(file_, "%.3f,%d,%d,%d,%.4f,%.3f\n", r.time_ms, r.desire, r.allotment, r.usage, r.inefficiency,
                 r.busy);
    std::fflush(file_);  // a killed job still leaves its rows behind
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
