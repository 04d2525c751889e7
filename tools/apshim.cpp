// The `apshim` command: run a program under the shim, and look at / clean the shared table.
//
//   apshim run [--eta X] [--est-cycle MS] [--policy NAME] [--P N] [--gat PATH] [--trace PATH]
//              [--log LEVEL] -- CMD ARGS...
//   apshim status [--json]     apshim top [--interval S] [--count N]     apshim gc
//   apshim options [--markdown]
// Every command honours APSHIM_GAT (or --gat PATH placed before the command).
#include <limits.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "gat/table.hpp"
#include "shim/options.hpp"

extern char** environ;

namespace {

using apshim::gat::Snapshot;
using apshim::gat::Table;

int usage(FILE* out) {
    std::fputs(
        "usage: apshim [--gat PATH] COMMAND\n"
        "  run [--eta X] [--est-cycle MS] [--policy NAME] [--P N] [--trace PATH] [--log LEVEL] -- CMD ARGS...\n"
        "                     run CMD with libapshim.so preloaded and these options set\n"
        "  status [--json]    print the allocation table\n"
        "  top [--interval S] [--count N]   refresh the table every S seconds (N times; default forever)\n"
        "  gc                 reclaim rows of dead processes\n"
        "  options [--markdown]  list the APSHIM_* environment variables\n"
        "The table is APSHIM_GAT, default /dev/shm/apshim-<uid>.\n",
        out);
    return out == stderr ? 2 : 0;
}

std::string table_path() {
    const char* p = std::getenv("APSHIM_GAT");
    return (p && *p) ? p : apshim::default_gat_path();
}

std::unique_ptr<Table> open_table() {
    std::string err;
    auto t = Table::open(table_path(), {}, err, Table::Mode::existing_only);
    if (!t) std::fprintf(stderr, "apshim: %s\n", err.c_str());
    return t;
}

std::string json_string(const std::string& s) {
    std::string out = "\"";
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') out += '\\', out += static_cast<char>(c);
        else if (c < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
        } else out += static_cast<char>(c);
    }
    return out + "\"";
}

void print_json(const Snapshot& s) {
    std::printf("{\"P\": %d, \"est_cycle_ms\": %g, \"jobs\": [", s.processors, s.est_cycle_ms);
    for (std::size_t i = 0; i < s.jobs.size(); ++i) {
        const auto& j = s.jobs[i];
        std::printf("%s{\"pid\": %d, \"name\": %s, \"desire\": %d, \"allotment\": %d, \"usage\": %d, \"eta\": %g}",
                    i ? ", " : "", static_cast<int>(j.pid), json_string(j.name).c_str(), j.desire, j.allotment,
                    j.usage, std::round(j.eta * 1000) / 1000);
    }
    std::printf("]}\n");
}

void print_table(const Snapshot& s, const std::string& path) {
    int total = 0;
    for (const auto& j : s.jobs) total += j.allotment;
    std::printf("table %s  P=%d  est_cycle=%g ms  jobs=%zu  allotted=%d  updates=%llu\n", path.c_str(), s.processors,
                s.est_cycle_ms, s.jobs.size(), total, static_cast<unsigned long long>(s.updates));
    std::printf("%8s  %-16s %7s %9s %6s %5s %10s\n", "PID", "NAME", "DESIRE", "ALLOTMENT", "USAGE", "ETA", "HEARTBEAT");
    for (const auto& j : s.jobs)
        std::printf("%8d  %-16s %7d %9d %6d %5.2f %8.0fms\n", static_cast<int>(j.pid), j.name.c_str(), j.desire,
                    j.allotment, j.usage, j.eta, j.heartbeat_age_ns / 1e6);
}

int cmd_status(int argc, char** argv) {
    bool json = argc > 0 && std::strcmp(argv[0], "--json") == 0;
    auto t = open_table();
    if (!t) return 1;
    Snapshot s = t->snapshot();
    if (json) print_json(s);
    else print_table(s, t->path());
    return 0;
}

int cmd_top(int argc, char** argv) {
    double interval = 0.5;
    long count = -1;
    for (int i = 0; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--interval")) interval = std::atof(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--count")) count = std::atol(argv[i + 1]);
        else return usage(stderr);
    }
    if (!(interval >= 0.05)) interval = 0.05;
    auto t = open_table();
    if (!t) return 1;
    bool tty = isatty(STDOUT_FILENO);
    for (long n = 0; count < 0 || n < count; ++n) {
        if (tty) std::printf("\033[H\033[2J");
        print_table(t->snapshot(), t->path());
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
        std::fprintf(stderr, "apshim: table lock not available\n");
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

// The shim next to this binary: <prefix>/bin/apshim -> <prefix>/lib/libapshim.so, or the
// build tree's tools/apshim -> shim/libapshim.so.
std::string find_library() {
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return "";
    self[n] = '\0';
    std::string dir(self);
    dir = dir.substr(0, dir.rfind('/'));
    for (const char* rel : {"/../lib/libapshim.so", "/../lib/x86_64-linux-gnu/libapshim.so", "/../shim/libapshim.so"}) {
        std::string p = dir + rel;
        if (access(p.c_str(), R_OK) == 0) {
            char real[PATH_MAX];
            return realpath(p.c_str(), real) ? std::string(real) : p;
        }
    }
    return "";
}

int cmd_run(int argc, char** argv) {
    // Flag -> environment variable; values are checked with the options table's own parsers.
    struct Flag { const char* flag; const char* env; };
    const Flag flags[] = {{"--eta", "APSHIM_ETA"},       {"--est-cycle", "APSHIM_EST_CYCLE_MS"},
                          {"--policy", "APSHIM_POLICY"}, {"--P", "APSHIM_P"},
                          {"--gat", "APSHIM_GAT"},       {"--trace", "APSHIM_TRACE"},
                          {"--log", "APSHIM_LOG"}};
    int n = 0;
    const apshim::OptionSpec* specs = apshim::option_specs(&n);
    int i = 0;
    for (; i < argc && std::strcmp(argv[i], "--") != 0; i += 2) {
        const Flag* f = nullptr;
        for (const Flag& c : flags)
            if (!std::strcmp(argv[i], c.flag)) f = &c;
        if (!f || i + 1 >= argc) {
            std::fprintf(stderr, "apshim run: unknown or incomplete option '%s'\n", argv[i]);
            return usage(stderr);
        }
        for (int k = 0; k < n; ++k) {
            if (std::strcmp(specs[k].env, f->env) != 0) continue;
            apshim::Options scratch;
            if (!specs[k].parse(argv[i + 1], scratch)) {
                std::fprintf(stderr, "apshim run: %s '%s' is invalid (expected %s)\n", f->flag, argv[i + 1], specs[k].values);
                return 2;
            }
        }
        setenv(f->env, argv[i + 1], 1);
    }
    if (i >= argc || i + 1 >= argc) {
        std::fprintf(stderr, "apshim run: missing '-- CMD'\n");
        return usage(stderr);
    }
    std::string lib = find_library();
    if (lib.empty()) {
        std::fprintf(stderr, "apshim run: cannot find libapshim.so next to this program\n");
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
    if (i + 1 < argc && !std::strcmp(argv[i], "--gat")) {
        setenv("APSHIM_GAT", argv[i + 1], 1);
        i += 2;
    }
    if (i >= argc) return usage(stderr);
    std::string cmd = argv[i];
    int rest = argc - i - 1;
    char** rargv = argv + i + 1;
    if (cmd == "run") return cmd_run(rest, rargv);
    if (cmd == "status") return cmd_status(rest, rargv);
    if (cmd == "top") return cmd_top(rest, rargv);
    if (cmd == "gc") return cmd_gc();
    if (cmd == "options") return cmd_options(rest, rargv);
    if (cmd == "-h" || cmd == "--help" || cmd == "help") return usage(stdout);
    std::fprintf(stderr, "apshim: unknown command '%s'\n", cmd.c_str());
    return usage(stderr);
}
