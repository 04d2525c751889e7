// The `apshim` command: run a program under the shim, and look at / clean the shared table.
//
//   apshim run [--eta X] [--est-cycle MS] [--P N] [--gat PATH] [--policy NAME] [--trace PATH]
//              [--log LEVEL] [--confine 1|0] [--shrink-teams 1|0]
//              [--inline-tasks 1|0] [--lend MS] -- CMD ARGS...
//              (the flags are the options table's, shim/options.cpp)
//   apshim status [--json]     apshim top [--interval S] [--count N]     apshim gc
//   apshim options [--markdown]
// Every command honours APSHIM_GAT (or --gat PATH placed before the command).
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <dirent.h>
#include <string>
#include <thread>
#include <vector>

#include "gat/dp.hpp"
#include "gat/names.hpp"
#include "gat/table.hpp"
#include "shim/options.hpp"

extern char** environ;

namespace {

using apshim::gat::Snapshot;
using apshim::gat::Table;
using apshim::gat::json_string;

int usage(FILE* out) {
    std::fputs("usage: apshim [--gat PATH] COMMAND\n  run", out);
    int n = 0;
    const apshim::OptionSpec* specs = apshim::option_specs(&n);
    for (int k = 0; k < n; ++k)
        if (specs[k].flag) std::fprintf(out, " [%s %s]", specs[k].flag, specs[k].flag_value);
    std::fputs(
        " -- CMD ARGS...\n"
        "                     run CMD with libapshim.so preloaded and these options set (APSHIM_*: `apshim options`)\n"
        "  status [--json]    print the allocation table\n"
        "  top [--interval S] [--count N]   refresh the table every S seconds (N times; default forever)\n"
        "  gc                 reclaim rows of dead processes\n"
        "  options [--markdown]  list the APSHIM_* environment variables\n"
        "The table is APSHIM_GAT, default /dev/shm/apshim-<uid>.\n",
        out);
    return out == stderr ? 2 : 0;
}

void complain(const char* line) { std::fprintf(stderr, "apshim: %s\n", line); }

// The options the shim itself would use here (APSHIM_GAT, APSHIM_P, APSHIM_EST_CYCLE_MS...),
// checked by the same table: a bad value is reported and replaced by its default, as in a job.
const apshim::Options& options() {
    static const apshim::Options o = apshim::parse_options(environ, &complain);
    return o;
}

std::string table_path() { return options().gat; }

// The table, or null: `missing` is set (and nothing printed) when no job has created it yet.
std::unique_ptr<Table> open_table(bool* missing = nullptr) {
    std::string path = table_path();
    struct stat st;
    if (missing) *missing = lstat(path.c_str(), &st) != 0 && errno == ENOENT;
    if (missing && *missing) return nullptr;
    std::string err;
    auto t = Table::open(path, {}, err, Table::Mode::existing_only);
    if (!t) std::fprintf(stderr, "apshim: %s\n", err.c_str());
    return t;
}

// What `status` shows before any job created the table: the P and est_cycle the first job
// would create it with here, and no jobs.
Snapshot empty_snapshot() {
    Snapshot s;
    s.processors = options().P;
    s.est_cycle_ms = options().est_cycle_ms;
    s.consistent = true;  // nothing to read mid-update
    return s;
}

// What `status` says about each job beyond its row: the runtimes the shim attached to, the table
// processors it runs on, its threads running now (from /proc), and why it has its allotment.
struct JobView {
    std::string runtimes;        // "tbb,libomp" or "none"
    std::vector<int> procs;      // table processor indices
    int threads_running = -1;    // state R in /proc/<pid>/task, -1 if unreadable
    const char* limited_by = ""; // "desire" (it wants no more), "share" (DP's fair share) or "away" (silent: holds none)
};

int threads_running(int pid) {
    char dir[64];
    std::snprintf(dir, sizeof dir, "/proc/%d/task", pid);
    DIR* d = opendir(dir);
    if (!d) return -1;
    int running = 0;
    while (dirent* e = readdir(d)) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        char path[384], buf[256];
        std::snprintf(path, sizeof path, "%s/%s/stat", dir, e->d_name);
        FILE* f = std::fopen(path, "re");
        if (!f) continue;
        std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
        std::fclose(f);
        buf[n] = '\0';
        const char* paren = std::strrchr(buf, ')');
        if (paren && paren[1] == ' ' && paren[2] == 'R') ++running;
    }
    closedir(d);
    return running;
}

JobView view_of(const apshim::gat::JobRow& j) {
    JobView v;
    for (auto [bit, name] : {std::pair{apshim::gat::kRuntimeTbb, "tbb"}, std::pair{apshim::gat::kRuntimeLibomp, "libomp"},
                             std::pair{apshim::gat::kRuntimeLibgomp, "libgomp"}})
        if (j.runtimes & bit) {
            if (!v.runtimes.empty()) v.runtimes += ',';  // not `"," + std::string`: see ranges()
            v.runtimes += name;
        }
    if (v.runtimes.empty()) v.runtimes = "none";
    for (int i = 0; i < apshim::gat::kMaxProcessors; ++i)
        if (j.procs[i]) v.procs.push_back(i);
    v.threads_running = threads_running(static_cast<int>(j.pid));
    v.limited_by = j.away ? "away" : j.allotment >= j.desire ? "desire" : "share";
    return v;
}

double fair_share(const Snapshot& s) {
    std::vector<apshim::gat::DpJob> jobs;
    for (const auto& j : s.jobs)
        if (!j.away) jobs.push_back({j.desire, j.allotment, 0});  // DP shares among the others
    return jobs.empty() ? s.processors : apshim::gat::dp_fair_share(jobs, s.processors);
}

// "0-3,8" for table processors {0, 1, 2, 3, 8}.
std::string ranges(const std::vector<int>& v) {
    std::string out;
    for (std::size_t i = 0; i < v.size();) {
        std::size_t k = i;
        while (k + 1 < v.size() && v[k + 1] == v[k] + 1) ++k;
        // Appended piece by piece: GCC 12 at -O3 (the Python package's Release build) calls
        // `"-" + std::to_string(...)` an overlapping memcpy (-Werror=restrict, a false positive).
        if (!out.empty()) out += ',';
        out += std::to_string(v[i]);
        if (k > i) {
            out += '-';
            out += std::to_string(v[k]);
        }
        i = k + 1;
    }
    return out.empty() ? "-" : out;
}

void print_json(const Snapshot& s) {
    double share = fair_share(s);
    std::string holder = "null";
    if (s.holder.tid > 0)
        holder = "{\"tid\": " + std::to_string(s.holder.tid) + ", \"pid\": " + std::to_string(s.holder.pid) +
                 ", \"name\": " + json_string(s.holder.name) + ", \"stopped\": " + (s.holder.stopped ? "true" : "false") +
                 ", \"stuck\": " + (s.holder.stuck ? "true" : "false") + "}";
    std::printf("{\"P\": %d, \"est_cycle_ms\": %g, \"fair_share\": %s, \"consistent\": %s, \"lock_holder\": %s, \"jobs\": [",
                s.processors, s.est_cycle_ms, std::isfinite(share) ? std::to_string(share).c_str() : "null",
                s.consistent ? "true" : "false", holder.c_str());
    for (std::size_t i = 0; i < s.jobs.size(); ++i) {
        const auto& j = s.jobs[i];
        JobView v = view_of(j);
        std::string procs, runtimes;
        for (int p : v.procs) {
            if (!procs.empty()) procs += ", ";
            procs += std::to_string(p);
        }
        for (std::size_t a = 0, b; a <= v.runtimes.size(); a = b + 1) {
            b = v.runtimes.find(',', a);
            if (b == std::string::npos) b = v.runtimes.size();
            if (v.runtimes.compare(a, b - a, "none") != 0) {
                runtimes += runtimes.empty() ? "\"" : ", \"";  // appended piece by piece: see ranges()
                runtimes += v.runtimes.substr(a, b - a);
                runtimes += '"';
            }
        }
        std::printf("%s{\"pid\": %d, \"name\": %s, \"desire\": %d, \"allotment\": %d, \"usage\": %d, \"eta\": %g, "
                    "\"runtimes\": [%s], \"processors\": [%s], \"threads_running\": %d, \"limited_by\": \"%s\", "
                    "\"heartbeat_ms\": %.1f}",
                    i ? ", " : "", static_cast<int>(j.pid), json_string(j.name).c_str(), j.desire, j.allotment,
                    j.usage, std::round(j.eta * 1000) / 1000, runtimes.c_str(), procs.c_str(), v.threads_running,
                    v.limited_by, j.heartbeat_age_ns / 1e6);
    }
    std::printf("]}\n");
}

void print_table(const Snapshot& s, const std::string& path) {
    int total = 0;
    for (const auto& j : s.jobs) total += j.allotment;
    double share = fair_share(s);
    char share_text[32] = "-";
    if (std::isfinite(share)) std::snprintf(share_text, sizeof share_text, "%.2f", share);
    std::printf("table %s  P=%d  est_cycle=%g ms  jobs=%zu  allotted=%d  fair share=%s  updates=%llu\n", path.c_str(),
                s.processors, s.est_cycle_ms, s.jobs.size(), total, share_text, static_cast<unsigned long long>(s.updates));
    if (!s.consistent) {
        std::string holder = apshim::gat::describe_holder(s.holder);
        std::printf("(read without the table's lock, held for over 100 ms by %s: rows may be mid-update%s)\n",
                    holder.empty() ? "a job" : holder.c_str(),
                    s.holder.stuck ? "; no job's allotment changes until it runs again" : "");
    }
    std::printf("%8s  %-16s %7s %9s %-8s %6s %5s %10s  %-14s %-10s %s\n", "PID", "NAME", "DESIRE", "ALLOTMENT", "LIMIT",
                "USAGE", "ETA", "HEARTBEAT", "RUNTIMES", "RUNNING", "PROCESSORS");
    for (const auto& j : s.jobs) {
        JobView v = view_of(j);
        std::printf("%8d  %-16s %7d %9d %-8s %6d %5.2f %8.0fms  %-14s %-10s %s\n", static_cast<int>(j.pid),
                    apshim::gat::printable(j.name).c_str(), j.desire, j.allotment, v.limited_by, j.usage, j.eta, j.heartbeat_age_ns / 1e6,
                    v.runtimes.c_str(), v.threads_running >= 0 ? std::to_string(v.threads_running).c_str() : "-",
                    ranges(v.procs).c_str());
    }
}

int cmd_status(int argc, char** argv) {
    bool json = argc > 0 && std::strcmp(argv[0], "--json") == 0;
    bool missing = false;
    auto t = open_table(&missing);
    if (!t && !missing) return 1;
    Snapshot s = t ? t->snapshot() : empty_snapshot();
    if (json) print_json(s);
    else print_table(s, t ? t->path() : table_path() + " (not created yet)");
    return 0;
}

// A number for a command-line flag, whole text or nothing: strtod/strtol with every check.
bool flag_number(const char* text, double lo, double hi, double& out) {
    char* end = nullptr;
    errno = 0;
    double v = std::strtod(text, &end);
    if (end == text || *end != '\0' || errno != 0 || !std::isfinite(v) || v < lo || v > hi) return false;
    out = v;
    return true;
}

int cmd_top(int argc, char** argv) {
    double interval = 0.5;
    long count = -1;
    for (int i = 0; i < argc; i += 2) {
        bool is_interval = !std::strcmp(argv[i], "--interval"), is_count = !std::strcmp(argv[i], "--count");
        if (!is_interval && !is_count) return usage(stderr);
        if (i + 1 >= argc) {
            std::fprintf(stderr, "apshim top: %s needs a value\n", argv[i]);
            return 2;
        }
        double v = 0;
        if (is_interval && (!flag_number(argv[i + 1], 0, 86400, v) || v <= 0)) {
            std::fprintf(stderr, "apshim top: --interval '%s' is invalid (expected seconds, a number in (0, 86400])\n", argv[i + 1]);
            return 2;
        }
        if (is_count && (!flag_number(argv[i + 1], 1, 1e9, v) || v != std::floor(v))) {
            std::fprintf(stderr, "apshim top: --count '%s' is invalid (expected a whole number in [1, 1000000000])\n", argv[i + 1]);
            return 2;
        }
        if (is_interval) interval = v;
        else count = static_cast<long>(v);
    }
    if (interval < 0.05) interval = 0.05;
    bool missing = false;
    auto t = open_table(&missing);
    if (!t && !missing) return 1;
    bool tty = isatty(STDOUT_FILENO);
    for (long n = 0; count < 0 || n < count; ++n) {
        if (tty) std::printf("\033[H\033[2J");
        if (!t && (t = open_table(&missing)) == nullptr && !missing) return 1;  // created meanwhile?
        if (t) print_table(t->snapshot(), t->path());
        else print_table(empty_snapshot(), table_path() + " (not created yet)");
        std::fflush(stdout);
        if (count < 0 || n + 1 < count) std::this_thread::sleep_for(std::chrono::duration<double>(interval));
    }
    return 0;
}

int cmd_gc() {
    auto t = open_table();
    if (!t) return 1;
    int n = t->gc();
    if (n < 0) {
        std::string holder = apshim::gat::describe_holder(t->lock_holder());
        std::fprintf(stderr, "apshim: table lock not available%s%s\n", holder.empty() ? "" : ": held by ", holder.c_str());
        return 1;
    }
    std::printf("reclaimed %d dead row%s\n", n, n == 1 ? "" : "s");
    return 0;
}

int cmd_options(int argc, char** argv) {
    bool md = argc > 0 && std::strcmp(argv[0], "--markdown") == 0;
    int n = 0;
    const apshim::OptionSpec* specs = apshim::option_specs(&n);
    if (md) std::printf("| variable | values | default | meaning |\n|---|---|---|---|\n");
    for (int i = 0; i < n; ++i) {
        if (md) std::printf("| `%s` | %s | %s | %s |\n", specs[i].env, specs[i].values, specs[i].default_text, specs[i].help);
        else std::printf("%s\n    values: %s\n    default: %s\n    %s\n", specs[i].env, specs[i].values, specs[i].default_text, specs[i].help);
    }
    return 0;
}

// The shim `apshim run` preloads: APSHIM_LIB when set; else next to this binary (<prefix>/bin/apshim
// -> <prefix>/lib/libapshim.so, or the build tree's tools/apshim -> shim/libapshim.so); else the
// install locations (the prefix this was built for, then /usr/local and /usr), so that a copied
// apshim still finds an installed library. Sets `looked` to where it looked, for the error.
std::string find_library(std::string& looked) {
    if (!options().lib.empty()) {
        looked = std::string("APSHIM_LIB=") + options().lib;
        return access(options().lib.c_str(), R_OK) == 0 ? options().lib : "";
    }
    std::vector<std::string> candidates;
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        std::string dir(self);
        dir = dir.substr(0, dir.rfind('/'));
        for (const char* rel : {"/../lib/libapshim.so", "/../lib/x86_64-linux-gnu/libapshim.so", "/../shim/libapshim.so"})
            candidates.push_back(dir + rel);
    }
    for (const char* installed : {APSHIM_INSTALLED_LIB, "/usr/local/lib/libapshim.so", "/usr/lib/libapshim.so",
                                  "/usr/lib/x86_64-linux-gnu/libapshim.so"})
        candidates.emplace_back(installed);
    for (std::size_t k = 0; k < candidates.size(); ++k) {
        const std::string& p = candidates[k];
        if (std::find(candidates.begin(), candidates.begin() + static_cast<long>(k), p) != candidates.begin() + static_cast<long>(k))
            continue;  // the build's install prefix is often one of the usual ones
        looked += (looked.empty() ? "" : ", ") + p;
        if (access(p.c_str(), R_OK) == 0) {
            char real[PATH_MAX];
            return realpath(p.c_str(), real) ? std::string(real) : p;
        }
    }
    return "";
}

int cmd_run(int argc, char** argv) {
    // Flag -> environment variable, both from the options table; values are checked with its parsers.
    int i = 0;
    for (; i < argc && std::strcmp(argv[i], "--") != 0; i += 2) {
        const apshim::OptionSpec* spec = apshim::find_option_by_flag(argv[i]);
        if (!spec || i + 1 >= argc) {
            std::fprintf(stderr, "apshim run: unknown or incomplete option '%s'\n", argv[i]);
            return usage(stderr);
        }
        apshim::Options scratch;
        if (!spec->parse(argv[i + 1], scratch)) {
            std::fprintf(stderr, "apshim run: %s '%s' is invalid (expected %s)\n", spec->flag, argv[i + 1], spec->values);
            return 2;
        }
        setenv(spec->env, argv[i + 1], 1);
    }
    if (i >= argc || i + 1 >= argc) {
        std::fprintf(stderr, "apshim run: missing '-- CMD'\n");
        return usage(stderr);
    }
    std::string looked;
    std::string lib = find_library(looked);
    if (lib.empty()) {
        std::fprintf(stderr, "apshim run: cannot find libapshim.so (looked at %s); set APSHIM_LIB to its path\n",
                     looked.c_str());
        return 1;
    }
    const char* old = std::getenv("LD_PRELOAD");
    std::string preload = lib;
    if (old && *old && std::strstr(old, lib.c_str()) == nullptr) preload += std::string(":") + old;
    else if (old && std::strstr(old, lib.c_str())) preload = old;
    setenv("LD_PRELOAD", preload.c_str(), 1);
    execvp(argv[i + 1], argv + i + 1);
    std::fprintf(stderr, "apshim run: cannot run %s: %s\n", argv[i + 1], std::strerror(errno));
    return 127;
}

}  // namespace

int main(int argc, char** argv) {
    int i = 1;
    if (i < argc && !std::strcmp(argv[i], "--gat")) {
        // Checked by APSHIM_GAT's own parser (absolute, no control characters, length).
        const apshim::OptionSpec* gat = apshim::find_option_by_flag("--gat");
        apshim::Options scratch;
        if (i + 1 >= argc || !gat->parse(argv[i + 1], scratch)) {
            std::fprintf(stderr, "apshim: --gat '%s' is invalid (expected %s)\n",
                         i + 1 < argc ? apshim::gat::printable(std::string(argv[i + 1]).substr(0, 80)).c_str() : "", gat->values);
            return 2;
        }
        setenv(gat->env, argv[i + 1], 1);
        i += 2;
    }
    if (i >= argc) return usage(stderr);
    std::string cmd = argv[i];
    int rest = argc - i - 1;
    char** rargv = argv + i + 1;
    // `apshim COMMAND --help`: the usage of every command, on stdout, exit 0.
    if (rest >= 1 && (!std::strcmp(rargv[0], "--help") || !std::strcmp(rargv[0], "-h"))) return usage(stdout);
    if (cmd == "run") return cmd_run(rest, rargv);
    if (cmd == "status") return cmd_status(rest, rargv);
    if (cmd == "top") return cmd_top(rest, rargv);
    if (cmd == "gc") return cmd_gc();
    if (cmd == "options") return cmd_options(rest, rargv);
    if (cmd == "-h" || cmd == "--help" || cmd == "help") return usage(stdout);
    std::fprintf(stderr, "apshim: unknown command '%s'\n", cmd.c_str());
    return usage(stderr);
}
