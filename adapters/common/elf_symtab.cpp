#include "adapters/common/elf_symtab.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace apshim {
namespace {

// The file mapped read-only for the length of one reading.
class MappedFile {
public:
    explicit MappedFile(const char* path) noexcept {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) return;
        struct stat st{};
        if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
            void* p = mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
            if (p != MAP_FAILED) {
                data_ = static_cast<const unsigned char*>(p);
                size_ = static_cast<std::size_t>(st.st_size);
            }
        }
        close(fd);
    }
    ~MappedFile() {
        if (data_) munmap(const_cast<unsigned char*>(data_), size_);
    }
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    // `count` objects of `T` at `offset`, or null where they do not lie wholly inside the file.
    template <typename T>
    const T* at(std::uint64_t offset, std::uint64_t count = 1) const noexcept {
        if (!data_ || offset > size_ || count > (size_ - offset) / sizeof(T) || offset % alignof(T) != 0)
            return nullptr;
        return reinterpret_cast<const T*>(data_ + offset);
    }

private:
    const unsigned char* data_ = nullptr;
    std::size_t size_ = 0;
};

bool is_function(const Elf64_Sym& s) noexcept {
    unsigned type = ELF64_ST_TYPE(s.st_info);
    return (type == STT_FUNC || type == STT_GNU_IFUNC) && s.st_shndx != SHN_UNDEF && s.st_size > 0;
}

int read_functions(const char* path, const char* prefix, FunctionRange* out, int max) noexcept {
    MappedFile file(path);
    const auto* eh = file.at<Elf64_Ehdr>(0);
    if (!eh || std::memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        eh->e_ident[EI_DATA] != ELFDATA2LSB || eh->e_shentsize != sizeof(Elf64_Shdr))
        return -1;
    const auto* sections = file.at<Elf64_Shdr>(eh->e_shoff, eh->e_shnum);
    if (!sections) return -1;
    const std::size_t prefix_len = std::strlen(prefix);
    int found = -1;
    for (unsigned i = 0; i < eh->e_shnum; ++i) {
        const Elf64_Shdr& symtab = sections[i];
        if (symtab.sh_type != SHT_SYMTAB || symtab.sh_entsize != sizeof(Elf64_Sym) || symtab.sh_link >= eh->e_shnum)
            continue;
        const Elf64_Shdr& strtab = sections[symtab.sh_link];
        const std::uint64_t count = symtab.sh_size / sizeof(Elf64_Sym);
        const auto* syms = file.at<Elf64_Sym>(symtab.sh_offset, count);
        const char* strings = file.at<char>(strtab.sh_offset, strtab.sh_size);
        if (!syms || !strings || strtab.sh_type != SHT_STRTAB) continue;
        if (found < 0) found = 0;
        for (std::uint64_t k = 0; k < count; ++k) {
            const Elf64_Sym& s = syms[k];
            // The name with its prefix lies inside the string table (a foreign file may end one
            // without its NUL).
            if (!is_function(s) || s.st_name >= strtab.sh_size || strtab.sh_size - s.st_name < prefix_len) continue;
            if (std::memcmp(strings + s.st_name, prefix, prefix_len) != 0) continue;
            if (found < max) out[found] = FunctionRange{s.st_value, s.st_value + s.st_size};
            ++found;
        }
    }
    return found;
}

}  // namespace

int symtab_functions_with_prefix(const char* path, const char* prefix, FunctionRange* out, int max) noexcept {
    if (!path || !prefix || (max > 0 && !out)) return -1;
    const int saved_errno = errno;
    int found = read_functions(path, prefix, out, max);
    errno = saved_errno;
    return found;
}

int PrefixedFunctions::read(const char* path, FunctionRange* ranges) const noexcept {
    int n = symtab_functions_with_prefix(path, prefix_, ranges, kRanges);
    return n < 0 ? 0 : (n < kRanges ? n : kRanges);
}

bool PrefixedFunctions::contains(const void* address) noexcept {
    Dl_info info{};
    link_map* map = nullptr;
    const int saved_errno = errno;
    const bool loaded = dladdr1(address, &info, reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP) != 0 && map;
    errno = saved_errno;
    if (!loaded) return false;
    const auto at = reinterpret_cast<std::uintptr_t>(address);
    if (at < map->l_addr) return false;
    const std::uintptr_t value = at - map->l_addr;
    auto inside = [value](const FunctionRange* ranges, int count) {
        for (int i = 0; i < count; ++i)
            if (value >= ranges[i].begin && value < ranges[i].end) return true;
        return false;
    };
    // The main program's link map has no name (dladdr gives argv[0], relative or found through PATH).
    const char* path = map->l_name && map->l_name[0] ? map->l_name : "/proc/self/exe";
    const int claimed = std::min(claimed_.load(std::memory_order_acquire), kObjects);
    bool being_read = false;
    for (int i = 0; i < claimed && !being_read; ++i) {
        const Object& o = table_[i];
        if (o.map.load(std::memory_order_acquire) != map) continue;
        if (o.ready.load(std::memory_order_acquire)) return inside(o.ranges, o.count);
        being_read = true;  // by another thread now (or by one that a fork left behind)
    }
    const int slot = being_read || claimed == kObjects ? kObjects : claimed_.fetch_add(1, std::memory_order_acq_rel);
    if (slot >= kObjects) {
        FunctionRange ranges[kRanges];
        return inside(ranges, read(path, ranges));
    }
    Object& o = table_[slot];
    o.map.store(map, std::memory_order_release);
    o.count = read(path, o.ranges);
    o.ready.store(true, std::memory_order_release);
    return inside(o.ranges, o.count);
}

}  // namespace apshim
