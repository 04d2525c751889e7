// Finding a runtime's real entry points (adapters/common/next_fn.hpp).
#include <catch2/catch.hpp>

#include <dlfcn.h>

#include "adapters/common/next_fn.hpp"

namespace {
using VersionFn = const char* (*)();
// Constant initialization is the point: a call that arrives from another library's constructor
// before our dynamic initializers ran must find the name (with dynamic initialization it read a
// null name and looked up nothing). `constinit` fails to compile otherwise.
constinit apshim::NextFn<VersionFn> next_version{"TBB_runtime_version"};
constinit apshim::NextFn<int (*)(const char*)> next_puts{"puts"};
}  // namespace

TEST_CASE("next_symbol finds a definition in the global scope", "[next_fn]") {
    CHECK(next_puts.get() != nullptr);
    CHECK(apshim::next_symbol("apshim_no_such_symbol_anywhere") == nullptr);
}

TEST_CASE("next_symbol finds a runtime loaded with RTLD_LOCAL, which RTLD_NEXT cannot see", "[next_fn]") {
    // As Python loads NumPy's OpenBLAS with its libgomp: outside the global scope.
    void* h = dlopen("libtbb.so.12", RTLD_NOW | RTLD_LOCAL);
    REQUIRE(h != nullptr);
    CHECK(dlsym(RTLD_DEFAULT, "TBB_runtime_version") == nullptr);
    CHECK(apshim::next_symbol("TBB_runtime_version", /*global_only=*/true) == nullptr);
    VersionFn fn = next_version.get();
    REQUIRE(fn != nullptr);
    CHECK(fn == reinterpret_cast<VersionFn>(dlsym(h, "TBB_runtime_version")));
    CHECK(fn()[0] != '\0');
    // Not dlclose()d: under TSan (scripts/test.sh) unloading a library named in a called_from_lib
    // suppression (tests/tsan.supp: libtbb.so.12) is a fatal error.
}
