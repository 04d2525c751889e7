// A fresh directory under /tmp for a unit test, removed with everything in it when the test
// program exits: a suite run many times over leaves nothing behind (it left one directory per
// test case). Only the process that made it removes it: a forked child's exit does not.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include <catch2/catch.hpp>

namespace apshim_test {

// prefix: the directory's name before mkdtemp's six characters, e.g. "apshim-unit-".
inline std::string temp_dir(const char* prefix) {
    struct Made {
        pid_t owner = getpid();
        std::vector<std::string> dirs;
        ~Made() {
            if (getpid() != owner) return;
            std::error_code ignored;
            for (const std::string& d : dirs) std::filesystem::remove_all(d, ignored);
        }
    };
    static Made made;
    std::string path = std::string("/tmp/") + prefix + "XXXXXX";
    REQUIRE(mkdtemp(path.data()) != nullptr);
    made.dirs.push_back(path);
    return path;
}

}  // namespace apshim_test
