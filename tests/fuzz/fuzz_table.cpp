// libFuzzer target over the table's opening, validation and update paths.
//
// An input either IS the file (any size, any bytes), or, when its first byte is odd, is a patch
// laid over a valid table image (so the fuzzer gets past the magic and reaches row handling and
// DP with garbage rows). The mutex bytes are left intact: a garbage lock word only makes the
// timed lock fail, which would just slow fuzzing down. Whatever the bytes, the shim must answer
// with an error or a sane allotment in [1, P], never crash or loop.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "gat/layout.hpp"
#include "gat/table.hpp"

namespace gat = apshim::gat;

namespace {

std::string g_dir, g_path;
std::vector<unsigned char> g_valid;  // a freshly created table image

// At a normal exit (the runs done): the directory goes, table and all. A crash keeps it.
void remove_dir() {
    std::error_code ignored;
    std::filesystem::remove_all(g_dir, ignored);
}

void init() {
    char dir[] = "/tmp/apshim-fuzz-XXXXXX";
    if (!mkdtemp(dir)) std::abort();
    g_dir = dir;
    std::atexit(remove_dir);
    g_path = g_dir + "/gat";
    std::string err;
    {
        auto t = gat::Table::open(g_path + ".seed", {8, 5000}, err);
        if (!t) std::abort();
    }
    int fd = ::open((g_path + ".seed").c_str(), O_RDONLY);
    g_valid.resize(gat::kFileSize);
    if (pread(fd, g_valid.data(), g_valid.size(), 0) != static_cast<ssize_t>(g_valid.size())) std::abort();
    close(fd);
    unlink((g_path + ".seed").c_str());
}

void write_file(const unsigned char* data, size_t size) {
    int fd = ::open(g_path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) std::abort();
    if (size && write(fd, data, size) != static_cast<ssize_t>(size)) std::abort();
    close(fd);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (g_path.empty()) init();
    if (size >= 3 && (data[0] & 1)) {
        std::vector<unsigned char> image = g_valid;
        size_t offset = (static_cast<size_t>(data[1]) << 8 | data[2]) * 64 % gat::kFileSize;
        const size_t lock_begin = offsetof(gat::Header, lock), lock_end = lock_begin + sizeof(pthread_mutex_t);
        for (size_t i = 3; i < size && offset < image.size(); ++i, ++offset)
            if (offset < lock_begin || offset >= lock_end) image[offset] = data[i];
        write_file(image.data(), image.size());
    } else {
        write_file(data, size);
    }
    std::string err;
    auto t = gat::Table::open(g_path, {8, 5000}, err, gat::Table::Mode::existing_only);
    if (!t) {
        if (err.empty()) std::abort();  // a refusal must say why
        return 0;
    }
    auto s = t->snapshot();
    if (s.processors < 1 || s.processors > gat::kMaxProcessors) std::abort();
    int slot = t->join(3, 0.5, err);
    if (slot >= 0) {
        int a = t->update(slot, s.processors, 1, 1000000);
        if (a != -1 && (a < 1 || a > s.processors)) std::abort();
        t->leave(slot);
    }
    t->gc();
    return 0;
}
