// The one options table for every APSHIM_* environment variable.
//
// Read once, in the shim's constructor (or by the CLI), never from a runtime hook. A bad value
// prints one clear line on stderr and the default is used (as mimalloc's options.c does).
#pragma once

#include <string>
#include <string_view>

namespace apshim {

enum class LogLevel { quiet = 0, error = 1, warn = 2, info = 3, debug = 4 };

struct Options {
    double eta = 0.5;           // target efficiency of WSAP, 0 < eta <= 1
    double est_cycle_ms = 5.0;  // desire-estimation / reallocation interval
    int P = 0;                  // processors the GAT distributes (0 until resolved)
    bool P_from_env = false;    // APSHIM_P was given explicitly
    std::string gat;            // path of the shared table
    std::string policy = "wsap";
    std::string trace;          // CSV path ("" = no trace); "%p" is replaced by the pid
    LogLevel log = LogLevel::warn;
    bool disable = false;
    bool confine = true;        // enforce the allotment by confining the job's threads to its CPUs
    bool use_idle = true;       // a job also runs on the table's processors that no job holds
    bool confine_check = true;  // stop confining a job that confinement slows far more than it frees (confine_check.hpp)
    bool check_bound = true;    // the check's unconfined windows cost what they do on 2 CPUs at any width (confine_check.hpp)
    bool idle_check = true;     // keep a job that the idle processors do not speed up to its own (idle_check.hpp)
    bool width_check = true;    // cap the desire of a job that gets further on half its processors (width_check.hpp)
    bool shrink_teams = false;  // size OpenMP teams (default and num_threads) to the allotment although dyn-var is false
    bool inline_tasks = true;   // on one CPU, run OpenMP tasks made inside tasks at once
    double lend_ms = 1.0;       // quiet this long: lend the processors at once (0: never)
    std::string lib;            // APSHIM_LIB: the libapshim.so `apshim run` preloads ("" = look for it)
};

// One row per variable: what it is called, its `apshim run` flag, what it takes, its default,
// what it does. `apshim options` prints this table; README.md carries the same rows (a test
// compares them); `apshim run` maps its flags to variables through it.
struct OptionSpec {
    const char* env;
    // `apshim run`'s flag for it ("--eta") and the flag value's name in the usage line ("X"), or
    // null when `apshim run` has none.
    const char* flag;
    const char* flag_value;
    const char* values;
    const char* default_text;
    const char* help;
    // Parses `text` into `out`; returns false (and leaves out unchanged) when invalid.
    bool (*parse)(std::string_view text, Options& out);
};

const OptionSpec* option_specs(int* count);
// The row of variable `env` ("APSHIM_ETA") or of flag `flag` ("--eta"); null when none.
const OptionSpec* find_option(std::string_view env);
const OptionSpec* find_option_by_flag(std::string_view flag);

// Parses the environment into a fresh Options. Invalid values are reported through `complain`
// (one line each, already formatted) and replaced by defaults.
// `mask_cpus`: as default_processors', for APSHIM_P's default.
Options parse_options(const char* const* envp, void (*complain)(const char* line), int mask_cpus = 0);

// Default processor count: CPUs in the affinity mask, capped by the CPU quota of this process's
// cgroup (cgroup_cpu_limit). Reads the files again on every call. `mask_cpus`: the CPUs of the
// process's mask where the caller knows them (the shim: confine::original_cpus(), since the
// calling thread's own mask may be a binding's), 0 to read the calling thread's.
int default_processors(int mask_cpus = 0);

// The CPU limit the cgroup quotas put on a process, rounded up, or 0 when there is none: the
// tightest over its cgroup and every ancestor, in each hierarchy named by `self_cgroup` (the
// text of /proc/self/cgroup) that has the cpu controller: v2 (cpu.max, "0::<path>", at `root`
// or `root`/unified) and v1 (cpu.cfs_quota_us / cpu.cfs_period_us, at `root`/<controllers>
// or `root`/cpu). `root` is where the hierarchies are mounted, /sys/fs/cgroup; missing files
// count as no quota. Only reads files, so tests can hand it a fake tree.
int cgroup_cpu_limit(const std::string& root, std::string_view self_cgroup);

// Default table path: /dev/shm/apshim-<uid>.
std::string default_gat_path();

// The policies the controller knows (APSHIM_POLICY values): shim/estimators' registry.
bool is_known_policy(std::string_view name);

}  // namespace apshim
