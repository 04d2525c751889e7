// sim: command line for the two-level scheduling simulator. CSV on stdout.
//
//   sim --scenario single|pair|p2|churn|custom [--jobs SPEC] [--P 16] [--est-cycle 50]
//       [--eta 0.5] [--policy wsap|static|asteal|inst] [--seed 1] [--steal-cost 1]
//       [--wake-cost 0] [--est-cost 0] [--static K | --native K] [--limit L]
//       [--outermost-only] [--park-valve STEPS] [--idle-block STEPS]
//       [--join-desire P|1] [--measure timed|clocks|auto] [--confine] [--lend STEPS]
//       [--out jobs|trace|summary|timeline] [--sample 100]
//       [--concurrent 256 --total 512]            (churn)
//       [--jobs-file FILE]                        (an arrival trace: one job SPEC item per line, # comments)
//
// SPEC: comma-separated WORKLOAD[@ARRIVAL][/LIMIT], e.g. "fib:26@0/8,fib:26@0/8,fib:26@5000/8".
// WORKLOAD: fib:N | loopy:N[:L] | knary:N:K:R[:W], each optionally *S (S steps per unit of work),
//           or phases joined by '+'.
// --static K: Cilk baseline, K workers per job, FIFO queue while fewer than K processors are free.
// --native K: K workers per job from its arrival, no queue (an unmodified runtime; the OS time-slices).
// The shim's behaviours (README "What is modelled"): --join-desire P (default; 1 = Sen §6.2),
// --measure timed (default) | clocks | auto, --confine, --lend STEPS (0 = off, default).
#include "bench/sim/sim.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

using namespace apshim::sim;

namespace {

[[noreturn]] void usage(const char* msg) {
    std::fprintf(stderr, "sim: %s\n(see the header of bench/sim/main.cpp or bench/sim/README.md)\n", msg);
    std::exit(2);
}

std::vector<JobSpec> parse_jobs(const std::string& s, int default_limit) {
    std::vector<JobSpec> out;
    std::size_t i = 0;
    while (i <= s.size()) {
        std::size_t c = s.find(',', i);
        std::string item = s.substr(i, c == std::string::npos ? std::string::npos : c - i);
        if (!item.empty()) {
            JobSpec j;
            j.limit = default_limit;
            std::size_t slash = item.find('/');
            if (slash != std::string::npos) { j.limit = std::stoi(item.substr(slash + 1)); item.resize(slash); }
            std::size_t at = item.find('@');
            if (at != std::string::npos) { j.arrival = std::stoll(item.substr(at + 1)); item.resize(at); }
            j.work = parse_workload(item);
            out.push_back(j);
        }
        if (c == std::string::npos) break;
        i = c + 1;
    }
    if (out.empty()) throw std::invalid_argument("no jobs");
    return out;
}

void print_jobs(const Result& r) {
    std::printf("job,spec,arrival,start,finish,response,T1,Tinf,work_done,avg_allot,avg_usage,greedy_bound,allprocs,cycles,cycles_to_P\n");
    for (const JobResult& j : r.jobs) {
        double bound = static_cast<double>(j.T1) / (j.avg_usage > 0 ? j.avg_usage : 1) + static_cast<double>(j.Tinf);
        std::printf("%d,%s,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%.4f,%.4f,%.1f,%lld,%d,%d\n", j.id, j.spec.c_str(),
                    static_cast<long long>(j.arrival), static_cast<long long>(j.start), static_cast<long long>(j.finish),
                    static_cast<long long>(j.response()), static_cast<long long>(j.T1), static_cast<long long>(j.Tinf),
                    static_cast<long long>(j.work_done), j.avg_allot, j.avg_usage, bound,
                    static_cast<long long>(j.allprocs), j.cycles, j.cycles_to_P);
    }
}

void print_summary(const Config& c, const Result& r) {
    double resp = 0;
    for (const JobResult& j : r.jobs) resp += static_cast<double>(j.response());
    resp /= static_cast<double>(r.jobs.size());
    std::printf("P,est_cycle,eta,policy,jobs,max_jobs,makespan,mean_response,throughput,power,util_alloc,util_busy,oversub,"
                "dp_calls,dp_violations,dp_ns_mean,dp_ns_p50,dp_ns_p99,dp_ns_max\n");
    double thr = static_cast<double>(r.jobs.size()) / static_cast<double>(r.makespan);
    std::printf("%d,%d,%.3f,%s,%zu,%d,%lld,%.1f,%.6g,%.6g,%.4f,%.4f,%.4f,%lld,%lld,%.0f,%.0f,%.0f,%.0f\n", c.P, c.est_cycle,
                c.eta, c.static_alloc > 0 ? ((c.native ? "native-" : "cilk-static-") + std::to_string(c.static_alloc)).c_str() : c.policy.c_str(),
                r.jobs.size(), r.max_jobs, static_cast<long long>(r.makespan), resp, thr, thr / resp, r.util_alloc,
                r.util_busy, r.oversub, static_cast<long long>(r.dp_calls), static_cast<long long>(r.dp_violations),
                r.dp_ns_mean, r.dp_ns_p50, r.dp_ns_p99, r.dp_ns_max);
}

void print_timeline(const Result& r) {
    std::printf("t,jobs,sum_desire,sum_allot,awake,busy,deprived,spread,over,under,fair,efficient\n");
    for (const TimelineRow& t : r.timeline)
        std::printf("%lld,%d,%lld,%lld,%lld,%.2f,%d,%d,%d,%d,%d,%d\n", static_cast<long long>(t.t), t.jobs,
                    static_cast<long long>(t.sum_desire), static_cast<long long>(t.sum_allot),
                    static_cast<long long>(t.awake), t.busy, t.deprived, t.spread, t.over, t.under, t.fair ? 1 : 0,
                    t.efficient ? 1 : 0);
}

// An arrival trace: the same items as --jobs, one per line; blank lines and '#' comments skipped.
std::string read_jobs_file(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::invalid_argument("cannot read " + path);
    std::string line, all;
    while (std::getline(in, line)) {
        line = line.substr(0, line.find('#'));
        line.erase(0, line.find_first_not_of(" \t\r"));
        line.erase(line.find_last_not_of(" \t\r") + 1);
        if (line.empty()) continue;
        if (!all.empty()) all += ',';
        all += line;
    }
    return all;
}

const char* event_name(TraceRow::Event e) {
    switch (e) {
        case TraceRow::Event::Estimate: return "estimate";
        case TraceRow::Event::Lend: return "lend";
        case TraceRow::Event::Reclaim: return "reclaim";
    }
    return "?";
}

void print_trace(const Result& r) {
    std::printf("t,job,r,usage,desire,allot,measure,event\n");
    for (const TraceRow& t : r.trace)
        std::printf("%lld,%d,%.4f,%d,%d,%d,%s,%s\n", static_cast<long long>(t.t), t.job, t.r, t.usage, t.desire, t.allot,
                    t.event != TraceRow::Event::Estimate ? "" : t.clocks ? "clocks" : "timed", event_name(t.event));
}

Config::Join parse_join(const std::string& v) {
    if (v == "P" || v == "p") return Config::Join::AtP;
    if (v == "1") return Config::Join::AtOne;
    throw std::invalid_argument("--join-desire is P or 1");
}

Config::Measure parse_measure(const std::string& v) {
    if (v == "timed") return Config::Measure::Timed;
    if (v == "clocks") return Config::Measure::Clocks;
    if (v == "auto") return Config::Measure::Automatic;
    throw std::invalid_argument("--measure is timed, clocks or auto");
}

}  // namespace

int main(int argc, char** argv) {
    Config cfg;
    std::string scenario = "single", jobs, out = "jobs";
    std::string jobs_file;
    int limit = 0, concurrent = 256, total = 512, sample = 100;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto val = [&]() -> std::string {
            if (i + 1 >= argc) usage(("missing value for " + a).c_str());
            return argv[++i];
        };
        try {
            if (a == "--scenario") scenario = val();
            else if (a == "--jobs") { jobs = val(); scenario = "custom"; }
            else if (a == "--jobs-file") { jobs_file = val(); scenario = "custom"; }
            else if (a == "--sample") sample = std::stoi(val());
            else if (a == "--P") cfg.P = std::stoi(val());
            else if (a == "--est-cycle") cfg.est_cycle = std::stoi(val());
            else if (a == "--eta") cfg.eta = std::stod(val());
            else if (a == "--policy") cfg.policy = val();
            else if (a == "--seed") cfg.seed = std::stoull(val());
            else if (a == "--steal-cost") cfg.steal_cost = std::stoi(val());
            else if (a == "--wake-cost") cfg.wake_cost = std::stoi(val());
            else if (a == "--est-cost") cfg.est_cost = std::stoi(val());
            else if (a == "--static") cfg.static_alloc = std::stoi(val());
            else if (a == "--outermost-only") cfg.outermost_only = true;
            else if (a == "--park-valve") cfg.park_valve = std::stoll(val());
            else if (a == "--idle-block") cfg.idle_block = std::stoll(val());
            else if (a == "--join-desire") cfg.join_desire = parse_join(val());
            else if (a == "--measure") cfg.measure = parse_measure(val());
            else if (a == "--confine") cfg.confine = true;
            else if (a == "--lend") cfg.lend = std::stoll(val());
            else if (a == "--native") { cfg.static_alloc = std::stoi(val()); cfg.native = true; }
            else if (a == "--limit") limit = std::stoi(val());
            else if (a == "--out") out = val();
            else if (a == "--concurrent") concurrent = std::stoi(val());
            else if (a == "--total") total = std::stoi(val());
            else if (a == "-h" || a == "--help") usage("usage");
            else usage(("unknown option " + a).c_str());
        } catch (const std::logic_error&) {
            usage(("bad value for " + a).c_str());
        }
    }
    if (cfg.P < 1 || cfg.est_cycle < 1 || !(cfg.eta > 0 && cfg.eta <= 1) || cfg.lend < 0)
        usage("need P >= 1, est-cycle >= 1, 0 < eta <= 1, lend >= 0");
    cfg.trace = out == "trace";
    if (out == "timeline") cfg.timeline_every = sample < 1 ? 1 : sample;
    try {
        if (!jobs_file.empty()) jobs = read_jobs_file(jobs_file);
        Result r;
        if (scenario == "churn") {
            r = simulate_churn(cfg, concurrent, total);
        } else {
            if (scenario == "single") jobs = "fib:25";
            else if (scenario == "pair") jobs = "fib:25,fib:25";
            else if (scenario == "p2") jobs = "knary:7:4:4+knary:8:5:0,knary:8:5:0+knary:7:4:4";
            else if (scenario != "custom") usage(("unknown scenario " + scenario).c_str());
            r = simulate(cfg, parse_jobs(jobs, limit));
        }
        if (out == "jobs") print_jobs(r);
        else if (out == "trace") print_trace(r);
        else if (out == "summary") print_summary(cfg, r);
        else if (out == "timeline") print_timeline(r);
        else usage("--out is jobs, trace, summary or timeline");
    } catch (const std::exception& e) {
        std::fprintf(stderr, "sim: %s\n", e.what());
        return 2;
    }
    return 0;
}
