// Does parking alone hold the job to its allotment?
//
// Where confinement cannot be (the user binds threads: OMP_PROC_BIND, KMP_AFFINITY, taskset
// inside the program; APSHIM_CONFINE=0; a seccomp filter on sched_setaffinity), parking is the
// only hold, and it stops a thread only where its runtime lets it stop: before a dynamic chunk,
// at a barrier, after a oneTBB task or inside its nested wait. A long region of static loops (NPB
// EP, GraphicsMagick's blur), one long task, or threads that spin on each other in the program's
// own code keep every thread running: NPB EP.W with OMP_PROC_BIND=true used 1.93 CPUs at
// allotment 1 of 2, and the shim said only, at APSHIM_LOG=info, that it would park. The README
// promises that the shim says so when it cannot do what it is there for.
//
// So the controller measures what the job uses against what it may use, in windows of kWindowNs
// while parking alone holds it (`applies`): a window in which the process used more CPUs than the
// most processors it could use in the window (its allotment, or the idle processors it runs on too,
// APSHIM_USE_IDLE: the threads the controller lets run) by kExcessCpus reads unheld (the
// controller then says so once). A window restarts whenever parking stops being the only hold
// (confined again, no longer held below the table's processors). The process's CPU time is read
// only where a window begins or ends.
// Pure logic, controller thread only.
#pragma once

#include <algorithm>
#include <cstdint>

namespace apshim {

class HoldCheck {
public:
    static constexpr std::uint64_t kWindowNs = 1'000'000'000;
    static constexpr double kExcessCpus = 0.5;

    // Each cycle, at `now`. `allotment`: the processors the job may use now; `applies`: parking
    // alone holds it now (confinement off, those processors fewer than the table's). `read_cpu()`
    // gives the process's CPU time in ns, and is called only at a window's ends. True when a
    // window ended now and read unheld (last_cpus(), last_allotment()).
    template <class ReadCpu>
    bool step(std::uint64_t now, int allotment, bool applies, ReadCpu read_cpu) {
        if (!applies) {
            open_ = false;
            return false;
        }
        if (!open_) {
            open_ = true;
            start_ns_ = now;
            start_cpu_ns_ = read_cpu();
            most_ = allotment;
            return false;
        }
        most_ = std::max(most_, allotment);
        if (now - start_ns_ < kWindowNs) return false;
        const std::uint64_t cpu = read_cpu();
        last_cpus_ = static_cast<double>(cpu - std::min(cpu, start_cpu_ns_)) / static_cast<double>(now - start_ns_);
        last_allotment_ = most_;
        start_ns_ = now;
        start_cpu_ns_ = cpu;
        most_ = allotment;
        return last_cpus_ > last_allotment_ + kExcessCpus;
    }

    double last_cpus() const noexcept { return last_cpus_; }
    int last_allotment() const noexcept { return last_allotment_; }

private:
    bool open_ = false;
    std::uint64_t start_ns_ = 0, start_cpu_ns_ = 0;
    int most_ = 0;  // the largest allotment since the window began
    double last_cpus_ = 0;
    int last_allotment_ = 0;
};

}  // namespace apshim
