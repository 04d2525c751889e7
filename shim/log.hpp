// The shim's only way to talk: one line per message on stderr, prefixed "apshim[pid]: ".
//
// No allocation, no stdio locks: a fixed stack buffer and one write(2), so a message is safe from
// the controller thread, at exit and after fork. Runtime hooks never log (they only count).
#pragma once

#include <atomic>
#include <cstdarg>

#include "shim/options.hpp"

namespace apshim {

void set_log_level(LogLevel level);
LogLevel log_level();

// printf-style; drops the message when `level` is above the configured one.
void log(LogLevel level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
void vlog(LogLevel level, const char* fmt, va_list ap) __attribute__((format(printf, 2, 0)));

// Says it only the first time `flag` is seen unset: "says so once on stderr".
#define APSHIM_LOG_ONCE(level, ...)                                  \
    do {                                                             \
        static std::atomic<bool> apshim_said_{false};                \
        if (!apshim_said_.exchange(true)) ::apshim::log(level, __VA_ARGS__); \
    } while (0)

}  // namespace apshim
