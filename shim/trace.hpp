// APSHIM_TRACE: one CSV row per est_cycle, written by the controller thread only.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace apshim {

struct TraceRow {
    double time_ms;       // since the controller started
    int desire, allotment, usage;
    double inefficiency;  // r of the cycle
    double busy;          // average threads executing user work during the cycle
};

class Trace {
public:
    // "%p" in `path_pattern` becomes the pid. Returns false (and says why once) on failure.
    bool open(const std::string& path_pattern);
    void write(const TraceRow& row);
    void close();
    // After fork in the child: forget the parent's file without flushing its buffer.
    void abandon();
    bool is_open() const { return file_ != nullptr; }

private:
    std::FILE* file_ = nullptr;
};

}  // namespace apshim
