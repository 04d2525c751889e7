#include "shim/options.hpp"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "gat/layout.hpp"
#include "shim/estimators/estimator.hpp"

namespace apshim {
namespace {

using gat::kMaxProcessors;
constexpr double kMinEstCycleMs = gat::kMinEstCycleUs / 1000.0, kMaxEstCycleMs = gat::kMaxEstCycleUs / 1000.0;
// The values column below spells these limits out: keep the text in step.
static_assert(kMaxProcessors == 4096 && gat::kMinEstCycleUs == 500 && gat::kMaxEstCycleUs == 10000000,
              "update the values text of APSHIM_P / APSHIM_EST_CYCLE_MS");

// "wsap | static | asteal | inst": the estimator registry's names joined at compile time (the
// table below is constant-initialized: the shim's first constructor reads it).
constexpr std::size_t joined_size(std::string_view sep) {
    std::size_t n = 0;
    for (std::string_view name : kPolicies) n += name.size() + sep.size();
    return n - sep.size() + 1;
}
template <std::size_t Size>
constexpr std::array<char, Size> join_policies(std::string_view sep) {
    std::array<char, Size> out{};
    std::size_t k = 0;
    for (std::string_view name : kPolicies) {
        if (k) for (char c : sep) out[k++] = c;
        for (char c : name) out[k++] = c;
    }
    return out;  // NUL-terminated: Size counts it, and out{} zeroed it
}
constexpr auto kPolicyValues = join_policies<joined_size(" | ")>(" | ");

bool parse_double(std::string_view text, double lo, double hi, bool lo_open, double& out) {
    // strtod needs a terminated string; options are short, a stack copy is enough.
    char buf[64];
    if (text.empty() || text.size() >= sizeof buf) return false;
    std::memcpy(buf, text.data(), text.size());
    buf[text.size()] = '\0';
    char* end = nullptr;
    errno = 0;
    double v = std::strtod(buf, &end);
    if (errno != 0 || end != buf + text.size() || !std::isfinite(v)) return false;
    if (v > hi || v < lo || (lo_open && v == lo)) return false;
    out = v;
    return true;
}

bool parse_int(std::string_view text, long lo, long hi, long& out) {
    long v = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || ptr != text.data() + text.size() || v < lo || v > hi) return false;
    out = v;
    return true;
}

bool parse_bool(std::string_view t, bool& out) {
    auto eq = [&](const char* s) { return t.size() == std::strlen(s) && strncasecmp(t.data(), s, t.size()) == 0; };
    if (eq("1") || eq("true") || eq("yes") || eq("on")) return out = true, true;
    if (eq("0") || eq("false") || eq("no") || eq("off")) return out = false, true;
    return false;
}

// A value or name from the environment as it may appear inside one stderr line: at most `max`
// bytes, control bytes (newlines, escape sequences) written as \xNN.
std::string printable(std::string_view v, std::size_t max) {
    std::string out;
    for (std::size_t i = 0; i < v.size() && i < max; ++i) {
        unsigned char c = static_cast<unsigned char>(v[i]);
        if (c < 0x20 || c == 0x7f) {
            char esc[8];
            std::snprintf(esc, sizeof esc, "\\x%02x", c);
            out += esc;
        } else {
            out += static_cast<char>(c);
        }
    }
    return out;
}

// Paths end up in stderr lines; one with a newline or an escape sequence would break them.
bool has_control(std::string_view v) {
    for (char ch : v)
        if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) return true;
    return false;
}

constinit const OptionSpec kSpecs[] = {
    {"APSHIM_ETA", "--eta", "X", "number in (0, 1]", "0.5",
     "target efficiency of the WSAP estimator: the desire grows while at most 1-eta of the job's "
     "processor time is spent idle/stealing",
     [](std::string_view t, Options& o) { return parse_double(t, 0.0, 1.0, true, o.eta); }},
    {"APSHIM_EST_CYCLE_MS", "--est-cycle", "MS", "number in [0.5, 10000]", "5",
     "milliseconds between desire estimations and reallocations; the first job to create the table "
     "fixes it for all jobs sharing that table",
     [](std::string_view t, Options& o) { return parse_double(t, kMinEstCycleMs, kMaxEstCycleMs, false, o.est_cycle_ms); }},
    {"APSHIM_P", "--P", "N", "integer in [1, 4096]", "CPUs in the affinity mask, capped by the cgroup cpu.max quota",
     "processors the table distributes; the first job to create the table fixes it; may exceed "
     "the real core count (tests use that to exercise larger allocations)",
     [](std::string_view t, Options& o) {
         long v;
         if (!parse_int(t, 1, kMaxProcessors, v)) return false;
         o.P = static_cast<int>(v);
         o.P_from_env = true;
         return true;
     }},
    {"APSHIM_GAT", "--gat", "PATH", "absolute path", "/dev/shm/apshim-<uid>",
     "the shared global allocation table; jobs that name the same file share processors",
     [](std::string_view t, Options& o) {
         if (t.empty() || t.front() != '/' || t.size() > 200 || has_control(t)) return false;
         o.gat.assign(t);
         return true;
     }},
    {"APSHIM_POLICY", "--policy", "NAME", kPolicyValues.data(), kPolicies[0].data(),
     "desire estimator: WSAP (Sen), static (desire = P, no adaptation), A-Steal (multiplicative), "
     "inst (instantaneous parallelism strawman)",
     [](std::string_view t, Options& o) {
         if (!is_known_policy(t)) return false;
         o.policy.assign(t);
         return true;
     }},
    {"APSHIM_TRACE", "--trace", "PATH", "file path, %p = pid", "(none)",
     "write one CSV row per est_cycle: time_ms, desire, allotment, usage, inefficiency, busy, cpus, "
     "threads_running, measure, confine_check, marks, idle_check, region_ends, width_check, cpu_ms (shim/README.md says what each means)",
     [](std::string_view t, Options& o) {
         if (t.empty() || t.size() > 200 || has_control(t)) return false;
         o.trace.assign(t);
         return true;
     }},
    {"APSHIM_LOG", "--log", "LEVEL", "quiet | error | warn | info | debug", "warn",
     "how much the shim says on stderr (always one line per distinct problem)",
     [](std::string_view t, Options& o) {
         static constexpr const char* names[] = {"quiet", "error", "warn", "info", "debug"};
         for (int i = 0; i < 5; ++i)
             if (t == names[i]) return o.log = static_cast<LogLevel>(i), true;
         return false;
     }},
    {"APSHIM_DISABLE", nullptr, nullptr, "1 | 0 (also true/false, yes/no, on/off)", "0",
     "1 turns the shim into a no-op: nothing is measured, registered or throttled",
     [](std::string_view t, Options& o) { return parse_bool(t, o.disable); }},
    {"APSHIM_CONFINE", "--confine", "1|0", "1 | 0 (also true/false, yes/no, on/off)", "1",
     "1 enforces the allotment by running the job's threads on as many CPUs as its allotment "
     "(off by itself where the user binds threads: OMP_PROC_BIND, OMP_PLACES, KMP_AFFINITY, "
     "GOMP_CPU_AFFINITY for an OpenMP runtime, or a narrower mask the program sets on its threads "
     "and keeps; hwloc's topology discovery, which binds a thread and restores it, is no binding); "
     "0 leaves only parking at safe points",
     [](std::string_view t, Options& o) { return parse_bool(t, o.confine); }},
    {"APSHIM_USE_IDLE", "--use-idle", "1|0", "1 | 0 (also true/false, yes/no, on/off)", "1",
     "1 lets a job's threads also run on the processors that no job in the table holds (all of them "
     "when the job is alone), as many active threads as that makes, until another job's allotment "
     "takes them (that job's DP run wakes this one at once): idle processors are not left idle unless "
     "they slow the job (APSHIM_IDLE_CHECK). 0 holds every job to exactly its allotment's processors",
     [](std::string_view t, Options& o) { return parse_bool(t, o.use_idle); }},
    {"APSHIM_CONFINE_CHECK", "--confine-check", "1|0", "1 | 0 (also true/false, yes/no, on/off)", "1",
     "1 leaves a throttled OpenMP job unthrottled for its first 100 ms (as without the shim; less in a "
     "parallel region whose marks are sparse), then "
     "compares, now and then, a confined job's progress per CPU-second with its start and with 15 ms "
     "unconfined probes, and leaves unconfined (as without the shim, said once on stderr) a job that "
     "gets more than 3x as far unconfined: threads that hand work to each other thousands of times a "
     "second, or spin on each other's flags, wait for a context switch at every hand-over when they "
     "share CPUs; and leaves unconfined, while they run, teams known to spin at their meetings (BLIS's, "
     "Eigen's products, parallel sections that stay open). 0 confines every throttled job at once, "
     "whatever it costs it",
     [](std::string_view t, Options& o) { return parse_bool(t, o.confine_check); }},
    {"APSHIM_CHECK_BOUND", "--check-bound", "1|0", "1 | 0 (also true/false, yes/no, on/off)", "1",
     "1 ends each unconfined window of the confinement check (its start, its probes, a confirmation's "
     "unconfined cycles) once it has used, beyond the job's own CPUs, the CPU time it uses at "
     "allotment 1 of 2 CPUs (each within a millisecond of it: the controller reads "
     "the CPU time between its cycles while one is open), so that it costs the co-runners the same "
     "on a machine of any width "
     "(on 2 CPUs nothing changes; on 16, at allotment 1, GraphicsMagick used 1.10-1.16 CPUs with it, "
     "1.16-1.35 without). The trade, on a wide machine: a hand-over-bound program that ends within "
     "100 ms may be confined before it is compared, and one whose threads spin on each other "
     "without progress marks gets a shorter probe. 0 gives the windows their full length",
     [](std::string_view t, Options& o) { return parse_bool(t, o.check_bound); }},
    {"APSHIM_IDLE_CHECK", "--idle-check", "1|0", "1 | 0 (also true/false, yes/no, on/off)", "1",
     "1 compares, now and then, an OpenMP job's progress per second on the idle processors "
     "(APSHIM_USE_IDLE) too and in a 30 ms probe on its own only, and keeps to its own processors, "
     "for 1 s to 32 s at a time, a job that gets 1.1x as far without the idle ones: threads that "
     "hand work to each other thousands of times a second can be slower spread over more CPUs. 0 "
     "lets every job use the idle processors",
     [](std::string_view t, Options& o) { return parse_bool(t, o.idle_check); }},
    {"APSHIM_WIDTH_CHECK", "--width-check", "1|0", "1 | 0 (also true/false, yes/no, on/off)", "1",
     "1 compares, now and then, an OpenMP job's progress per second on all the processors it runs on "
     "(its own and the idle ones it uses) and in a probe on half of them (the other half after a probe that found nothing; both halves once one gains, holding on the one that gains more), and has a job that gets 1.25x as far on half (in two probes "
     "350 ms apart) ask for no more than half, for 1 s to 32 s at a time, so that DP gives the rest to other jobs: threads that "
     "spin on each other (sched_yield loops, more threads than CPUs) hand work over at once on "
     "shared CPUs. 0 lets every job keep what DP gives it",
     [](std::string_view t, Options& o) { return parse_bool(t, o.width_check); }},
    {"APSHIM_SHRINK_TEAMS", "--shrink-teams", "1|0", "1 | 0 (also true/false, yes/no, on/off)", "0",
     "1 sizes OpenMP teams, default ones and num_threads() requests alike, to the allotment even "
     "while dynamic adjustment is off (as OMP_DYNAMIC=true allows). Risky: OpenMP then breaks its "
     "promise of the team asked for (omp_get_max_threads() threads for a default one), and programs "
     "that split work by it and wait for every piece hang (OpenBLAS's own regions are kept whole, "
     "BLIS's whole or of one, and gcc's parallel sections of two or more sections whole: Debian's "
     "velvet, whose sections wait for each other, hangs natively with OMP_THREAD_LIMIT=1), as do "
     "sections that wait for each other inside a parallel region, and clang's; only for programs "
     "known to be malleable",
     [](std::string_view t, Options& o) { return parse_bool(t, o.shrink_teams); }},
    {"APSHIM_INLINE_TASKS", "--inline-tasks", "1|0", "1 | 0 (also true/false, yes/no, on/off)", "1",
     "1: while the job has allotment 1 (one CPU), an OpenMP task made inside another task runs at once "
     "on the thread that made it (what OpenMP allows and both runtimes do when their queues are "
     "long), instead of paying for a queue no other CPU reads. 0 leaves every task to the runtime: "
     "for a program whose nested tasks wait for their parent to go on",
     [](std::string_view t, Options& o) { return parse_bool(t, o.inline_tasks); }},
    {"APSHIM_LEND_MS", "--lend", "MS", "number in [0, 10000]", "1",
     "a job whose runtimes' threads have all been outside any parallel construct this long (a serial "
     "phase, I/O, a join) asks for one processor at once, so co-runners take the others before its next "
     "est_cycle, and asks them back when its next construct starts; 0 never lends (the desire then "
     "follows at the next est_cycle)",
     [](std::string_view t, Options& o) { return parse_double(t, 0.0, kMaxEstCycleMs, false, o.lend_ms); }},
    {"APSHIM_LIB", nullptr, nullptr, "absolute path", "(next to apshim, then the install locations)",
     "the libapshim.so that `apshim run` preloads; for an apshim command copied away from its library",
     [](std::string_view t, Options& o) {
         if (t.empty() || t.front() != '/' || t.size() > 400 || has_control(t)) return false;
         o.lib.assign(t);
         return true;
     }},
    {"APSHIM_ADDED", nullptr, nullptr, "(set by the shim)", "(none)",
     "not for users: the variables the shim added to the environment (KMP_BLOCKTIME, ...), removed "
     "again from programs started without the shim",
     [](std::string_view, Options&) { return true; }},
};

}  // namespace

const OptionSpec* option_specs(int* count) {
    *count = static_cast<int>(sizeof kSpecs / sizeof kSpecs[0]);
    return kSpecs;
}

const OptionSpec* find_option(std::string_view env) {
    for (const OptionSpec& spec : kSpecs)
        if (env == spec.env) return &spec;
    return nullptr;
}

const OptionSpec* find_option_by_flag(std::string_view flag) {
    for (const OptionSpec& spec : kSpecs)
        if (spec.flag && flag == spec.flag) return &spec;
    return nullptr;
}

bool is_known_policy(std::string_view name) {
    for (std::string_view p : kPolicies)
        if (name == p) return true;
    return false;
}

std::string default_gat_path() { return "/dev/shm/apshim-" + std::to_string(geteuid()); }

namespace {

// The whole of a small file (a cgroup knob, /proc/self/cgroup) into `out`; false if unreadable.
bool read_small_file(const std::string& path, std::string& out) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    out.clear();
    char buf[4096];
    for (;;) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        out.append(buf, static_cast<std::size_t>(n));
        if (out.size() > 65536) break;  // no cgroup file is this long
    }
    ::close(fd);
    return true;
}

// Processors a quota of `quota` per `period` amounts to, rounded up (1.5 CPUs -> 2); 0 = none.
long quota_cpus(long quota, long period) { return quota > 0 && period > 0 ? (quota + period - 1) / period : 0; }

// cgroup v2 cpu.max at `dir`: "max 100000" (none) or "<quota> <period>".
long v2_limit(const std::string& dir) {
    std::string text;
    if (!read_small_file(dir + "/cpu.max", text)) return 0;
    long quota = 0, period = 0;
    if (std::sscanf(text.c_str(), "%ld %ld", &quota, &period) != 2) return 0;  // "max ..." too
    return quota_cpus(quota, period);
}

// cgroup v1 cpu.cfs_quota_us (-1 = none) and cpu.cfs_period_us at `dir`.
long v1_limit(const std::string& dir) {
    std::string q, p;
    if (!read_small_file(dir + "/cpu.cfs_quota_us", q) || !read_small_file(dir + "/cpu.cfs_period_us", p)) return 0;
    long quota = 0, period = 0;
    if (std::sscanf(q.c_str(), "%ld", &quota) != 1 || std::sscanf(p.c_str(), "%ld", &period) != 1) return 0;
    return quota_cpus(quota, period);
}

// The tightest limit on `cgroup` and each of its ancestors under the hierarchy mounted at
// `mount` (a missing mount or file is no limit). A path that climbs ("..": the process is
// outside its cgroup namespace's root) is read at the mount's root only.
long tightest_on_path(const std::string& mount, std::string_view cgroup, long (*limit_at)(const std::string&)) {
    std::vector<std::string_view> parts;
    while (!cgroup.empty()) {
        std::size_t slash = cgroup.find('/');
        std::string_view part = cgroup.substr(0, slash);
        cgroup = slash == std::string_view::npos ? std::string_view() : cgroup.substr(slash + 1);
        if (part.empty() || part == ".") continue;
        if (part == "..") {
            parts.clear();
            break;
        }
        parts.push_back(part);
    }
    long best = 0;
    std::string dir = mount;
    for (std::size_t level = 0;; ++level) {
        long l = limit_at(dir);
        if (l > 0 && (best == 0 || l < best)) best = l;
        if (level == parts.size()) break;
        dir += '/';
        dir += parts[level];
    }
    return best;
}

}  // namespace

int cgroup_cpu_limit(const std::string& root, std::string_view self_cgroup) {
    long best = 0;
    auto take = [&](long l) {
        if (l > 0 && (best == 0 || l < best)) best = l;
    };
    while (!self_cgroup.empty()) {
        std::size_t nl = self_cgroup.find('\n');
        std::string_view line = self_cgroup.substr(0, nl);
        self_cgroup = nl == std::string_view::npos ? std::string_view() : self_cgroup.substr(nl + 1);
        // "<hierarchy id>:<controllers>:<path>"; the path may itself hold ':'.
        std::size_t c1 = line.find(':');
        std::size_t c2 = c1 == std::string_view::npos ? c1 : line.find(':', c1 + 1);
        if (c2 == std::string_view::npos) continue;
        std::string_view id = line.substr(0, c1), controllers = line.substr(c1 + 1, c2 - c1 - 1), path = line.substr(c2 + 1);
        if (path.empty() || path.front() != '/') continue;
        if (id == "0" && controllers.empty()) {  // v2: unified at the root, or beside v1 (hybrid)
            take(tightest_on_path(root, path, &v2_limit));
            take(tightest_on_path(root + "/unified", path, &v2_limit));
            continue;
        }
        bool cpu = false;  // v1: a hierarchy with the cpu controller, mounted as "cpu" or "cpu,cpuacct"
        for (std::string_view rest = controllers; !rest.empty();) {
            std::size_t comma = rest.find(',');
            if (rest.substr(0, comma) == "cpu") cpu = true;
            rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
        }
        if (!cpu) continue;
        take(tightest_on_path(root + "/" + std::string(controllers), path, &v1_limit));
        if (controllers != "cpu") take(tightest_on_path(root + "/cpu", path, &v1_limit));
    }
    return best > kMaxProcessors ? kMaxProcessors : static_cast<int>(best);
}

int default_processors(int mask_cpus) {
    int cpus = mask_cpus;
    cpu_set_t set;
    if (cpus <= 0 && sched_getaffinity(0, sizeof set, &set) == 0) cpus = CPU_COUNT(&set);
    if (cpus <= 0) cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
    if (cpus <= 0) cpus = 1;
    // The quota of this process's own cgroup and its ancestors (v1 or v2), not the root's.
    std::string self;
    if (read_small_file("/proc/self/cgroup", self)) {
        int limit = cgroup_cpu_limit("/sys/fs/cgroup", self);
        if (limit > 0 && limit < cpus) cpus = limit;
    }
    if (cpus > kMaxProcessors) cpus = kMaxProcessors;
    return cpus;
}

Options parse_options(const char* const* envp, void (*complain)(const char* line), int mask_cpus) {
    Options o;
    for (const char* const* e = envp; e && *e; ++e) {
        std::string_view kv(*e);
        if (kv.substr(0, 7) != "APSHIM_") continue;
        size_t eq = kv.find('=');
        if (eq == std::string_view::npos) continue;
        std::string_view key = kv.substr(0, eq), value = kv.substr(eq + 1);
        const OptionSpec* spec = find_option(key);
        char line[512];
        if (!spec) {
            std::snprintf(line, sizeof line, "unknown environment option %s ignored (see `apshim options`)",
                          printable(key, 80).c_str());
            complain(line);
            continue;
        }
        if (!spec->parse(value, o)) {
            std::snprintf(line, sizeof line,
                          "environment option %s has an invalid value '%s' (expected %s); using the default (%s)",
                          spec->env, printable(value, 80).c_str(), spec->values, spec->default_text);
            complain(line);
        }
    }
    if (o.P == 0) o.P = default_processors(mask_cpus);
    if (o.gat.empty()) o.gat = default_gat_path();
    return o;
}

}  // namespace apshim
