#include "shim/log.hpp"

#include <unistd.h>

#include <cstdarg>
#include <cstdio>

namespace apshim {
namespace {
std::atomic<int> g_level{static_cast<int>(LogLevel::warn)};
// Past this many lines the shim goes quiet: a hot-path failure must not flood the host's stderr.
constexpr int kMaxLines = 100;
std::atomic<int> g_lines{0};
}  // namespace

void set_log_level(LogLevel level) { g_level.store(static_cast<int>(level), std::memory_order_relaxed); }
LogLevel log_level() { return static_cast<LogLevel>(g_level.load(std::memory_order_relaxed)); }

void log(LogLevel level, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vlog(level, fmt, ap);
    va_end(ap);
}

void vlog(LogLevel level, const char* fmt, va_list ap) {
    if (static_cast<int>(level) > g_level.load(std::memory_order_relaxed)) return;
    if (g_lines.fetch_add(1, std::memory_order_relaxed) >= kMaxLines) return;
    char buf[640];
    int n = std::snprintf(buf, sizeof buf, "apshim[%d]: ", static_cast<int>(getpid()));
    int m = std::vsnprintf(buf + n, sizeof buf - n - 1, fmt, ap);
    if (m < 0) m = 0;
    size_t len = static_cast<size_t>(n) + (static_cast<size_t>(m) < sizeof buf - n - 1 ? m : sizeof buf - n - 2);
    buf[len++] = '\n';
    ssize_t ignored = write(STDERR_FILENO, buf, len);
    (void)ignored;
}

}  // namespace apshim
