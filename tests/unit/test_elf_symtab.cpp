// A loaded object's full symbol table, read from its file (adapters/common/elf_symtab.hpp): the
// functions of this test program (not stripped, nothing exported) found by name prefix, and files
// that cannot tell (none, not ELF, cut short) read as such, never as a crash.
#include <catch2/catch.hpp>

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "adapters/common/elf_symtab.hpp"
#include "adapters/omp/whole_team.hpp"

using apshim::FunctionRange;
using apshim::PrefixedFunctions;
using apshim::symtab_functions_with_prefix;

namespace {
// Local functions of this program: in its .symtab only.
__attribute__((noinline)) int elf_symtab_probe_one(int x) { return x * 3 + 1; }
__attribute__((noinline)) int elf_symtab_probe_two(int x) { return x * 5 + 2; }
}  // namespace
// A local function under the name of an instantiation of Eigen's parallel product, as a program
// built from source with Eigen and -fopenmp has one (its .symtab only, no dynamic symbol).
static int fake_eigen_gemm(int x) __asm__("_ZN5Eigen8internal16parallelize_gemmILb1EN6apshim4unitElEEvRKT0_T1_S6_S6_b");
static __attribute__((noinline, used)) int fake_eigen_gemm(int x) { return x * 7 + 3; }

namespace {
std::uintptr_t load_bias(const void* address) {
    Dl_info info{};
    link_map* map = nullptr;
    REQUIRE(dladdr1(address, &info, reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP) != 0);
    return map->l_addr;
}

std::string temp_file(const std::string& bytes) {
    char path[] = "/tmp/apshim-elf-XXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    REQUIRE(write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
    close(fd);
    return path;
}

std::string own_file() {
    std::ifstream in("/proc/self/exe", std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}
}  // namespace

TEST_CASE("a program's own functions are found by name prefix in its .symtab, with their ranges", "[elf_symtab]") {
    REQUIRE(elf_symtab_probe_one(1) + elf_symtab_probe_two(1) == 11);
    FunctionRange ranges[4];
    int n = symtab_functions_with_prefix("/proc/self/exe", "_ZN12_GLOBAL__N_120elf_symtab_probe_", ranges, 4);
    REQUIRE(n == 2);
    const auto bias = load_bias(reinterpret_cast<const void*>(&elf_symtab_probe_one));
    const auto one = reinterpret_cast<std::uintptr_t>(&elf_symtab_probe_one) - bias;
    const auto two = reinterpret_cast<std::uintptr_t>(&elf_symtab_probe_two) - bias;
    auto holds = [&](std::uintptr_t v) {
        return (v >= ranges[0].begin && v < ranges[0].end) || (v >= ranges[1].begin && v < ranges[1].end);
    };
    CHECK(holds(one));
    CHECK(holds(two));
    CHECK(holds(one + 1));
    // Fewer kept than found: the count still says how many there are.
    CHECK(symtab_functions_with_prefix("/proc/self/exe", "_ZN12_GLOBAL__N_120elf_symtab_probe_", ranges, 1) == 2);
    CHECK(symtab_functions_with_prefix("/proc/self/exe", "_ZN5Eigen8internal16parallelize_gemm", ranges, 4) == 1);
    CHECK(symtab_functions_with_prefix("/proc/self/exe", "no_function_is_called_this", ranges, 4) == 0);
}

TEST_CASE("a loaded object's functions are told by address, its table read once", "[elf_symtab]") {
    REQUIRE(fake_eigen_gemm(1) == 10);
    PrefixedFunctions eigen("_ZN5Eigen8internal16parallelize_gemm");
    const char* inside = reinterpret_cast<const char*>(&fake_eigen_gemm);
    CHECK(eigen.contains(inside));
    CHECK(eigen.contains(inside + 1));
    CHECK_FALSE(eigen.contains(reinterpret_cast<const void*>(&elf_symtab_probe_one)));
    CHECK_FALSE(eigen.contains(reinterpret_cast<const void*>(&dlopen)));  // libc: stripped
    CHECK_FALSE(eigen.contains(nullptr));
    CHECK(eigen.contains(inside));  // the kept ranges
}

TEST_CASE("Eigen's product compiled into a program without a dynamic symbol spins at its meetings",
          "[elf_symtab][whole_team]") {
    using apshim::omp_adapter::team_need;
    using apshim::omp_adapter::TeamNeed;
    CHECK(team_need(reinterpret_cast<const char*>(&fake_eigen_gemm) + 4) == TeamNeed::any_spinning);
    CHECK(team_need(reinterpret_cast<const char*>(&elf_symtab_probe_two) + 4) == TeamNeed::any);
}

TEST_CASE("a file that cannot tell reads as such", "[elf_symtab]") {
    FunctionRange ranges[4];
    CHECK(symtab_functions_with_prefix("/nonexistent/apshim-elf", "f", ranges, 4) == -1);
    CHECK(symtab_functions_with_prefix("/proc/self/status", "f", ranges, 4) == -1);  // not a regular file
    CHECK(symtab_functions_with_prefix(nullptr, "f", ranges, 4) == -1);
    const std::string self = own_file();
    REQUIRE(self.size() > 4096);
    std::vector<std::string> files = {
        temp_file("#!/bin/sh\necho not ELF\n"),
        temp_file(self.substr(0, 64)),                 // the header only: its section headers past the end
        temp_file(self.substr(0, self.size() / 2)),    // cut in half: section headers (at the end) gone
        temp_file(std::string(self.size(), '\x7f')),   // no magic
    };
    // The header intact, its section header table's offset beyond the file.
    std::string bad = self;
    bad[0x28] = '\xff';
    bad[0x2f] = '\x7f';
    files.push_back(temp_file(bad));
    for (const auto& f : files) {
        CHECK(symtab_functions_with_prefix(f.c_str(), "_ZN", ranges, 4) == -1);
        std::remove(f.c_str());
    }
}
