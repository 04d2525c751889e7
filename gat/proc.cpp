#include "gat/proc.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace apshim::gat {

namespace {

ProcInfo read_stat(const char* path) {
    ProcInfo info;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return info;
    char buf[1024];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return info;
    buf[n] = '\0';
    // comm may hold spaces and parentheses: fields restart after the LAST ')'.
    char* p = std::strrchr(buf, ')');
    if (!p || p[1] != ' ') return info;
    p += 2;
    info.exists = true;
    info.state = *p;
    info.zombie = (*p == 'Z' || *p == 'X');
    // p points at field 3 (state); starttime is field 22.
    for (int field = 3; field < 22 && p; ++field) {
        p = std::strchr(p, ' ');
        if (p) ++p;
    }
    if (p) info.start_time = std::strtoull(p, nullptr, 10);
    return info;
}

}  // namespace

ProcInfo read_proc(pid_t pid) {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
    return read_stat(path);
}

ProcInfo read_own_thread(pid_t tid) {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/self/task/%d/stat", static_cast<int>(tid));
    return read_stat(path);
}

std::uint64_t thread_run_ns(pid_t tid) {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/schedstat", static_cast<int>(tid));
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    char buf[128];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return 0;
    buf[n] = '\0';
    return std::strtoull(buf, nullptr, 10);
}

std::vector<pid_t> self_threads(bool* readable) {
    std::vector<pid_t> tids;
    DIR* d = opendir("/proc/self/task");
    if (readable) *readable = d != nullptr;
    if (!d) return tids;
    while (dirent* e = readdir(d))
        if (e->d_name[0] >= '0' && e->d_name[0] <= '9') tids.push_back(static_cast<pid_t>(std::atoi(e->d_name)));
    closedir(d);
    return tids;
}

bool thread_of(pid_t pid, pid_t tid) {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/task/%d", static_cast<int>(pid), static_cast<int>(tid));
    return pid > 0 && tid > 0 && access(path, F_OK) == 0;
}

bool pid_exists(pid_t pid) { return pid > 0 && (kill(pid, 0) == 0 || errno != ESRCH); }

bool process_alive(pid_t pid, std::uint64_t start_time) {
    if (!pid_exists(pid)) return false;
    ProcInfo info = read_proc(pid);
    // Not readable although kill() saw it: another pid namespace or hidepid; trust kill().
    if (!info.exists) return true;
    return !info.zombie && info.start_time == start_time;
}

void self_name(char* out, int len) {
    // /proc/self/comm is the process's (thread-group leader's) name; prctl would give the
    // calling thread's, which for the controller is "apshim-ctl".
    char comm[64] = "?";
    int fd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n = read(fd, comm, sizeof comm - 1);
        close(fd);
        comm[n > 0 ? n : 0] = '\0';
        if (char* nl = std::strchr(comm, '\n')) *nl = '\0';
    }
    std::snprintf(out, static_cast<size_t>(len), "%s", comm);
}

}  // namespace apshim::gat
