// The options table: defaults, valid values, and one clear complaint per bad value.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "shim/options.hpp"

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
    CHECK(g_lines.empty());
}

TEST_CASE("valid values are taken", "[options]") {
    auto o = parse({"APSHIM_ETA=0.75", "APSHIM_EST_CYCLE_MS=2.5", "APSHIM_P=16", "APSHIM_GAT=/tmp/x",
                    "APSHIM_POLICY=asteal", "APSHIM_TRACE=/tmp/t-%p.csv", "APSHIM_LOG=debug", "APSHIM_DISABLE=yes"});
    CHECK(o.eta == 0.75);
    CHECK(o.est_cycle_ms == 2.5);
    CHECK(o.P == 16);
    CHECK(o.P_from_env);
    CHECK(o.gat == "/tmp/x");
    CHECK(o.policy == "asteal");
    CHECK(o.trace == "/tmp/t-%p.csv");
    CHECK(o.log == apshim::LogLevel::debug);
    CHECK(o.disable);
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
