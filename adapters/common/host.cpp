// The Host every adapter reaches the shim through (adapters/adapter.hpp): the disabled one until
// the shim installs its own.
#include <atomic>
#include <cstdarg>

#include "adapters/adapter.hpp"

namespace apshim {
namespace host_detail {
constinit std::atomic<const Host*> g_installed{nullptr};
constinit const Host g_disabled;
constinit std::atomic<bool> g_lent{false};
}  // namespace host_detail

void install_host(const Host& h) noexcept { host_detail::g_installed.store(&h, std::memory_order_release); }

void Host::log(Severity level, const char* fmt, ...) const noexcept {
    va_list ap;
    va_start(ap, fmt);
    vlog(level, fmt, ap);
    va_end(ap);
}

}  // namespace apshim
