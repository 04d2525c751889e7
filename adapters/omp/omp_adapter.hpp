// Controller side of the OpenMP adapters: one Adapter per runtime, over that runtime's State.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>

#include "adapters/adapter.hpp"
#include "adapters/common/slot_sampler.hpp"
#include "adapters/omp/omp_state.hpp"
#include "adapters/omp/whole_team.hpp"

namespace apshim::omp_adapter {

class OmpAdapter final : public Adapter {
public:
    // needs_ompt: libomp, measured through OMPT; when libomp did not take apshim as its tool,
    // sample() falls back to "every allowed thread busy while regions run" (no adaptation, a
    // fair share from DP) and says so once.
    OmpAdapter(const char* name, State& state, bool needs_ompt) : name_(name), state_(state), needs_ompt_(needs_ompt) {}
    const char* name() const override { return name_.load(std::memory_order_acquire); }
    // The runtime behind the entry points where it is not the one they are named for: libomp
    // (and Intel's libiomp5) implement libgomp's GOMP_* ones too (gomp_runtime_name). Before the
    // runtime is reported started, from the program's first fork.
    void rename(const char* name) noexcept { name_.store(name, std::memory_order_release); }
    Sample sample() override;
    Activity activity() override;
    void set_active(int n) override;
    void set_team_cap(int n) override;
    int active() const override;
    void release() override;
    void after_fork_child() override;
    // libomp only through OMPT (a libomp that did not take apshim as its tool calls no hook).
    bool marks_progress() const override {
        return (!needs_ompt_ || state_.measuring.load() != 0) && !state_.copies.several();
    }

private:
    Sample unmeasured_sample();
    Sample several_copies_sample();
    Sample fair_share_sample();
    std::atomic<const char*> name_;
    State& state_;
    bool needs_ompt_;
    SlotSampler sampler_;
    RecentMax recent_limits_;
    std::uint64_t last_ns_ = 0, last_forks_ = 0;
    bool timed_throughout_ = false;  // the hooks timed everything since the last sample (tbb_adapter.cpp)
    SpinningSeen spinning_seen_;     // spinning teams, from sample to sample (whole_team.hpp)
};

extern OmpAdapter g_kmp, g_gomp;

// Every OpenMP adapter of the process (libomp, libgomp), used or not.
std::span<Adapter* const> adapters() noexcept;

}  // namespace apshim::omp_adapter
