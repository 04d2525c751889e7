// The options table: defaults, valid values, and one clear complaint per bad value.
#include <catch2/catch.hpp>

#include <sched.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "gat/layout.hpp"
#include "shim/estimators/estimator.hpp"
#include "shim/options.hpp"
#include "tests/unit/temp_dir.hpp"

namespace {
std::vector<std::string> g_lines;
void collect(const char* line) { g_lines.emplace_back(line); }

apshim::Options parse(std::vector<const char*> env) {
    g_lines.clear();
    env.push_back(nullptr);
    return apshim::parse_options(env.data(), &collect);
}
}  // namespace

TEST_CASE("options have the documented defaults", "[options]") {
    auto o = parse({});
    CHECK(o.eta == 0.5);
    CHECK(o.est_cycle_ms == 5.0);
    CHECK(o.P >= 1);
    CHECK_FALSE(o.P_from_env);
    CHECK(o.gat.rfind("/dev/shm/apshim-", 0) == 0);
    CHECK(o.policy == "wsap");
    CHECK(o.trace.empty());
    CHECK_FALSE(o.disable);
    CHECK(o.check_bound);  // measured on 16 CPUs (confine_check.hpp)
    CHECK(g_lines.empty());
}

TEST_CASE("valid values are taken", "[options]") {
    auto o = parse({"APSHIM_ETA=0.75", "APSHIM_EST_CYCLE_MS=2.5", "APSHIM_P=16", "APSHIM_GAT=/tmp/x",
                    "APSHIM_POLICY=asteal", "APSHIM_TRACE=/tmp/t-%p.csv", "APSHIM_LOG=debug", "APSHIM_DISABLE=yes",
                    "APSHIM_CHECK_BOUND=off"});
    CHECK(o.eta == 0.75);
    CHECK(o.est_cycle_ms == 2.5);
    CHECK(o.P == 16);
    CHECK(o.P_from_env);
    CHECK(o.gat == "/tmp/x");
    CHECK(o.policy == "asteal");
    CHECK(o.trace == "/tmp/t-%p.csv");
    CHECK(o.log == apshim::LogLevel::debug);
    CHECK(o.disable);
    CHECK_FALSE(o.check_bound);
    CHECK(g_lines.empty());
}

TEST_CASE("every bad value gives one line and the default", "[options]") {
    const char* bad[] = {"APSHIM_ETA=",          "APSHIM_ETA=0",         "APSHIM_ETA=-0.5",  "APSHIM_ETA=nan",
                         "APSHIM_ETA=1.5",       "APSHIM_ETA=0.5x",      "APSHIM_ETA=1e999", "APSHIM_EST_CYCLE_MS=0",
                         "APSHIM_EST_CYCLE_MS=inf", "APSHIM_P=0",         "APSHIM_P=-4",      "APSHIM_P=99999999999999",
                         "APSHIM_P=4.5",         "APSHIM_P=abc",         "APSHIM_GAT=relative/path",
                         "APSHIM_POLICY=fastest", "APSHIM_LOG=loud",     "APSHIM_DISABLE=maybe", "APSHIM_TRACE="};
    apshim::Options defaults = parse({});
    for (const char* kv : bad) {
        INFO(kv);
        auto o = parse({kv});
        REQUIRE(g_lines.size() == 1);
        std::string name(kv, std::string(kv).find('='));
        CHECK(g_lines[0].find(name) != std::string::npos);
        CHECK(g_lines[0].find("using the default") != std::string::npos);
        CHECK(o.eta == defaults.eta);
        CHECK(o.est_cycle_ms == defaults.est_cycle_ms);
        CHECK(o.P == defaults.P);
        CHECK(o.policy == defaults.policy);
        CHECK(o.disable == defaults.disable);
    }
}

TEST_CASE("unknown APSHIM_ variables are reported, others ignored", "[options]") {
    parse({"APSHIM_ETTA=0.3", "PATH=/bin", "APSHIMX=1"});
    REQUIRE(g_lines.size() == 1);
    CHECK(g_lines[0].find("APSHIM_ETTA") != std::string::npos);
}

namespace {
// A fake cgroup tree under a fresh temporary directory: write(relative path, content).
struct FakeCgroups {
    std::string root;
    FakeCgroups() {
        root = apshim_test::temp_dir("apshim-cgroup-");
    }
    void write(const std::string& rel, const std::string& content) {
        std::string path = root + "/" + rel;
        for (std::size_t s = path.find('/', root.size() + 1); s != std::string::npos; s = path.find('/', s + 1))
            mkdir(path.substr(0, s).c_str(), 0700);
        FILE* f = std::fopen(path.c_str(), "w");
        REQUIRE(f != nullptr);
        std::fputs(content.c_str(), f);
        std::fclose(f);
    }
    int limit(const std::string& self) const { return apshim::cgroup_cpu_limit(root, self); }
};
}  // namespace

TEST_CASE("cgroup v2: the tightest cpu.max on the process's cgroup and its ancestors", "[options][cgroup]") {
    FakeCgroups fs;
    std::string self = "0::/user.slice/job.scope\n";
    CHECK(fs.limit(self) == 0);  // no files at all: no quota
    fs.write("cpu.max", "max 100000\n");
    fs.write("user.slice/cpu.max", "300000 100000\n");
    CHECK(fs.limit(self) == 3);  // an ancestor's quota counts
    fs.write("user.slice/job.scope/cpu.max", "150000 100000\n");
    CHECK(fs.limit(self) == 2);  // 1.5 CPUs round up
    fs.write("user.slice/job.scope/cpu.max", "max 100000\n");
    CHECK(fs.limit(self) == 3);  // "max" is no quota: the parent's stays
    CHECK(fs.limit("0::/other\n") == 0);  // another cgroup: not ours
    fs.write("cpu.max", "50000 100000\n");
    CHECK(fs.limit(self) == 1);  // the root's, tighter still
    CHECK(fs.limit("0::/\n") == 1);
}

TEST_CASE("cgroup v1: cfs quota and period on the cpu hierarchy, nested", "[options][cgroup]") {
    FakeCgroups fs;
    std::string self = "12:memory:/elsewhere\n4:cpu,cpuacct:/docker/abc\n0::/\n";
    fs.write("cpu,cpuacct/cpu.cfs_quota_us", "-1\n");
    fs.write("cpu,cpuacct/cpu.cfs_period_us", "100000\n");
    fs.write("cpu,cpuacct/docker/cpu.cfs_quota_us", "400000\n");
    fs.write("cpu,cpuacct/docker/cpu.cfs_period_us", "100000\n");
    fs.write("cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "-1\n");
    fs.write("cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000\n");
    CHECK(fs.limit(self) == 4);  // the parent's quota; the job's own is -1
    fs.write("cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "250000\n");
    CHECK(fs.limit(self) == 3);
    fs.write("cpu,cpuacct/docker/abc/cpu.cfs_period_us", "50000\n");
    CHECK(fs.limit(self) == 4);  // 5 CPUs; the parent's 4 is tighter
    // Mounted as plain "cpu" (Debian's layout on this machine), a quota file without its period
    // (no quota), and a memory-only hierarchy whose files must be ignored.
    FakeCgroups plain;
    plain.write("cpu/job/cpu.cfs_quota_us", "50000\n");
    plain.write("cpu/job/cpu.cfs_period_us", "100000\n");
    plain.write("memory/job/cpu.cfs_quota_us", "1\n");
    CHECK(plain.limit("1:cpu:/job\n7:memory:/job\n") == 1);
    plain.write("cpu/lone/cpu.cfs_quota_us", "50000\n");
    CHECK(plain.limit("1:cpu:/lone\n") == 0);
    CHECK(plain.limit("7:memory:/job\n") == 0);
}

TEST_CASE("cgroup: hybrid v1/v2, odd lines and climbing paths", "[options][cgroup]") {
    FakeCgroups fs;
    fs.write("unified/svc/cpu.max", "200000 100000\n");
    CHECK(fs.limit("1:cpu:/\n0::/svc\n") == 2);  // the v2 hierarchy beside v1 ones
    fs.write("cpu/cpu.cfs_quota_us", "100000\n");
    fs.write("cpu/cpu.cfs_period_us", "100000\n");
    CHECK(fs.limit("1:cpu:/\n0::/svc\n") == 1);  // tightest of both
    CHECK(fs.limit("garbage\n::\n1:cpu\n1:cpu:relative\n") == 0);
    CHECK(fs.limit("1:cpu:/../..\n") == 1);  // outside the namespace's root: the root's quota only
    fs.write("cpu.max", "abc def\n");
    CHECK(fs.limit("0::/\n") == 0);  // unparsable: no quota
    CHECK(apshim::cgroup_cpu_limit(fs.root + "/missing", "0::/\n1:cpu:/\n") == 0);
}

TEST_CASE("default_processors() is at least 1 and at most the affinity mask", "[options][cgroup]") {
    int p = apshim::default_processors();
    cpu_set_t set;
    REQUIRE(sched_getaffinity(0, sizeof set, &set) == 0);
    CHECK(p >= 1);
    CHECK(p <= CPU_COUNT(&set));
}

TEST_CASE("the options table is the one source of apshim run's flags, the policies and the limits", "[options]") {
    const char* flags[][2] = {{"--eta", "APSHIM_ETA"},       {"--est-cycle", "APSHIM_EST_CYCLE_MS"},
                              {"--policy", "APSHIM_POLICY"}, {"--P", "APSHIM_P"},
                              {"--gat", "APSHIM_GAT"},       {"--trace", "APSHIM_TRACE"},
                              {"--log", "APSHIM_LOG"},       {"--confine", "APSHIM_CONFINE"},
                              {"--shrink-teams", "APSHIM_SHRINK_TEAMS"}, {"--inline-tasks", "APSHIM_INLINE_TASKS"}};
    for (auto& f : flags) {
        INFO(f[0]);
        const apshim::OptionSpec* spec = apshim::find_option_by_flag(f[0]);
        REQUIRE(spec);
        CHECK(std::string(spec->env) == f[1]);
        CHECK(spec == apshim::find_option(f[1]));
    }
    CHECK(apshim::find_option_by_flag("--disable") == nullptr);
    CHECK(apshim::find_option_by_flag("APSHIM_ETA") == nullptr);
    // Every registered estimator is a valid APSHIM_POLICY, listed in its values, and builds itself.
    std::string values = apshim::find_option("APSHIM_POLICY")->values;
    for (std::string_view name : apshim::kPolicies) {
        std::string kv = "APSHIM_POLICY=" + std::string(name);
        auto o = parse({kv.c_str()});
        CHECK(g_lines.empty());
        CHECK(o.policy == name);
        CHECK(values.find(std::string(name)) != std::string::npos);
        CHECK(apshim::make_estimator(name)->name() == name);
    }
    CHECK(values == "wsap | static | asteal | inst");
    // The limits are gat/layout.hpp's.
    std::string lo = "APSHIM_EST_CYCLE_MS=" + std::to_string(apshim::gat::kMinEstCycleUs / 1000.0);
    std::string hi = "APSHIM_EST_CYCLE_MS=" + std::to_string(apshim::gat::kMaxEstCycleUs / 1000.0);
    std::string maxp = "APSHIM_P=" + std::to_string(apshim::gat::kMaxProcessors);
    std::string overp = "APSHIM_P=" + std::to_string(apshim::gat::kMaxProcessors + 1);
    for (const std::string* ok : {&lo, &hi, &maxp}) {
        parse({ok->c_str()});
        CHECK(g_lines.empty());
    }
    parse({overp.c_str()});
    CHECK(g_lines.size() == 1);
}
