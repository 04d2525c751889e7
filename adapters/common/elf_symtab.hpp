// Which functions of a loaded object carry a given name, from its full symbol table.
//
// dladdr() answers from the dynamic symbols only: what a shared object exports. An executable
// exports nothing unless linked with -rdynamic, so a function compiled into a program (Eigen's
// parallel product in a program built from source with -fopenmp) has no name there, though the
// file on disk still holds its full symbol table (.symtab) unless it was stripped (what a build of
// one's own keeps: CMake's Release and RelWithDebInfo, a plain g++ -O2; Debian's packages strip
// theirs). This reads that table once per loaded object and keeps the address ranges of the
// functions whose names begin with a prefix: the file mapped read-only, its section headers, the
// symbol table and its strings, every offset checked against the file's size, so that a truncated
// or foreign file reads as having none. Allocates nothing; the calling thread's errno is kept.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace apshim {

// A function's symbol values (addresses less the object's load bias, link_map::l_addr): [begin, end).
struct FunctionRange {
    std::uintptr_t begin = 0, end = 0;
};

// The function symbols (STT_FUNC, STT_GNU_IFUNC, defined, sized) of the 64-bit little-endian ELF
// file `path` whose names begin with `prefix`: up to `max` of them into `out`. Returns how many
// there are (it may exceed `max`), or -1 where the file cannot tell (no such file, not ELF64, no
// .symtab: stripped).
int symtab_functions_with_prefix(const char* path, const char* prefix, FunctionRange* out, int max) noexcept;

// For one name prefix: whether code at an address in this process lies in a function so named,
// by each loaded object's .symtab (the main program's read through /proc/self/exe, since dladdr
// names it by argv[0]), read the first time an address in that object is asked about and kept for
// kObjects objects (kRanges functions each). Meant for a caller that asks once per call site
// (whole_team.cpp: through SiteCache) of code that has no dynamic symbol. Any thread, and without a
// lock, so that a fork() in another thread while one reads cannot leave the child waiting: an
// object being read by another thread, or beyond the kept ones, is read again for the one answer.
class PrefixedFunctions {
public:
    static constexpr int kObjects = 16;
    static constexpr int kRanges = 64;
    explicit constexpr PrefixedFunctions(const char* prefix) noexcept : prefix_(prefix) {}
    bool contains(const void* address) noexcept;

private:
    struct Object {
        std::atomic<const void*> map{nullptr};  // its link_map (unique while it stays loaded)
        std::atomic<bool> ready{false};         // count and ranges written
        int count = 0;  // ranges kept (at most kRanges)
        FunctionRange ranges[kRanges];
    };
    // Reads the object's file `path` into `ranges` (kRanges of them): how many were kept.
    int read(const char* path, FunctionRange* ranges) const noexcept;
    const char* prefix_;
    std::atomic<int> claimed_{0};  // slots of table_ taken (may exceed kObjects)
    Object table_[kObjects];
};

}  // namespace apshim
