// The shared-memory layout of the global allocation table (GAT). Changing anything here
// means bumping kLayoutVersion: jobs built against another layout refuse the file.
#pragma once

#include <pthread.h>

#include <cstdint>

namespace apshim::gat {

constexpr std::uint64_t kMagic = 0x3154414748535041ull;  // "APSHGAT1" little-endian
constexpr std::uint32_t kLayoutVersion = 3;  // 2: per-row processor sets (placement); 3: runtimes
constexpr int kMaxRows = 512;         // jobs per table (issue 7's 256-job scenarios fit twice)
// Limits every part of apshim checks against (options, table validation, the CLI): defined here
// only.
constexpr int kMaxProcessors = 4096;              // P
constexpr std::uint32_t kMinEstCycleUs = 500;       // est_cycle: 0.5 ms ..
constexpr std::uint32_t kMaxEstCycleUs = 10000000;  // .. 10 s
constexpr int kNameLen = 32;

enum RowState : std::uint32_t { kFree = 0, kLive = 1 };

// Row::runtimes bits: which runtimes a job's shim attached to (named by the table, not known to it).
constexpr std::uint32_t kRuntimeTbb = 1, kRuntimeLibomp = 2, kRuntimeLibgomp = 4;

struct alignas(64) Row {
    std::uint32_t state;        // RowState
    std::int32_t pid;
    std::uint64_t start_time;   // /proc/<pid>/stat field 22: tells a reused pid apart
    std::uint64_t join_seq;     // arrival order: DP's tie-breaks follow it
    std::int32_t desire;        // d_j, written by the job
    std::int32_t allotment;     // a_j, written by DP (any job)
    std::int32_t usage;         // p_j, written by the job
    float eta;                  // the job's target efficiency (for display)
    std::uint64_t heartbeat_ns; // CLOCK_MONOTONIC of the job's last update
    char name[kNameLen];        // comm of the job, NUL-terminated
    std::uint32_t runtimes;     // the runtimes the job uses (kRuntime* bits), for `apshim status`
    // Futex word (FUTEX_WAIT, not private: every job maps the file): bumped, and the job woken,
    // when another job's DP run changed this job's allotment or processors, so that it follows
    // at once instead of at its next est_cycle (Table::wait_for_change). Was `reserved2` (always
    // 0) in layout 3: jobs that do not know it simply never wake early.
    std::uint32_t changes;
    // The table processors this job runs on (bit i = processor i), written by placement after
    // every DP run (gat/placement.hpp): allotment many, disjoint from other jobs' while they fit.
    std::uint64_t procs[kMaxProcessors / 64];
};

struct alignas(64) Header {
    std::uint64_t magic;        // written last by the creator (the file is linked in only after)
    std::uint32_t version;
    std::uint32_t header_size;
    std::uint64_t file_size;
    std::uint32_t row_size;
    std::uint32_t max_rows;
    std::int32_t processors;    // P
    std::uint32_t est_cycle_us; // one est_cycle for every job sharing the table (Sen §6.1)
    std::uint32_t owner_uid;
    std::uint32_t reserved;
    std::uint64_t join_counter; // next join_seq
    std::uint64_t last_scan_ns; // last liveness scan that reads /proc (the rows silent for an est_cycle), one per est_cycle
    std::uint64_t updates;      // DP runs, for `apshim status`
    pthread_mutex_t lock;       // robust + process-shared: a holder killed mid-update is detected
};

struct Layout {
    Header header;
    Row rows[kMaxRows];
};

constexpr std::uint64_t kFileSize = sizeof(Layout);

}  // namespace apshim::gat
