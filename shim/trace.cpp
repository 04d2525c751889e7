#include "shim/trace.hpp"

#include <dirent.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
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
    DIR* d = opendir("/proc/self/task");
    if (!d) return 0;
    int running = 0;
    const long self = syscall(SYS_gettid);  // the controller itself, running while it looks
    while (dirent* e = readdir(d)) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9' || std::atol(e->d_name) == self) continue;
        char path[320], buf[256];
        std::snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
        FILE* f = std::fopen(path, "re");
        if (!f) continue;
        std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
        std::fclose(f);
        buf[n] = '\0';
        const char* close_paren = std::strrchr(buf, ')');  // the name may hold spaces and parens
        if (close_paren && close_paren[1] == ' ' && close_paren[2] == 'R') ++running;
    }
    closedir(d);
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
