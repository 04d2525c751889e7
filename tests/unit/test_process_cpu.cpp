// The process's CPU time counted to the moment of reading (shim/process_cpu.hpp), where
// CLOCK_PROCESS_CPUTIME_ID counts a thread that keeps its CPU only at the kernel's ticks.
#include <catch2/catch.hpp>

#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <vector>

#include "adapters/common/clock.hpp"
#include "shim/confine.hpp"
#include "shim/process_cpu.hpp"

using apshim::ProcessCpu;

namespace {

std::uint64_t clock_ns(clockid_t c) {
    std::uint64_t ns = 0;
    apshim::read_clock_ns(c, ns);
    return ns;
}

void sleep_ms(long ms) {
    timespec d{0, ms * 1000000};
    nanosleep(&d, nullptr);
}

// A thread that computes until stopped, without a system call: nothing but the tick (or a
// co-runner taking its CPU) makes the scheduler count its time.
struct Spinner {
    std::atomic<bool> stop{false};
    pthread_t thread{};
    static void* run(void* arg) {
        auto* self = static_cast<Spinner*>(arg);
        volatile unsigned long n = 0;
        while (!self->stop.load(std::memory_order_relaxed)) n = n + 1;
        return nullptr;
    }
    Spinner() {
        pthread_create(&thread, nullptr, run, this);
        apshim::confine::thread_created();  // as the shim's pthread_create interposer says it
    }
    ~Spinner() {
        stop = true;
        pthread_join(thread, nullptr);
    }
};

// How late a reading counts the spinner, in the median of `readings` taken 1 ms apart: the
// spinner's own clock read just after it (which brings its time up to date), less what the
// reading holds of it (the reading less this thread's own time). Read exactly, the lag is the
// few microseconds between the two; by the process clock alone, whatever the spinner ran since
// the scheduler last counted it (at the last reading of its clock, a tick or a switch).
template <class Read>
std::uint64_t median_lag_ns(Read read, clockid_t spinner, int readings) {
    std::vector<std::uint64_t> lags;
    for (int i = 0; i < readings; ++i) {
        sleep_ms(1);
        std::uint64_t reading = read();
        std::uint64_t own = clock_ns(CLOCK_THREAD_CPUTIME_ID);
        std::uint64_t spun = clock_ns(spinner);
        lags.push_back(spun + own > reading ? spun + own - reading : 0);
    }
    std::nth_element(lags.begin(), lags.begin() + readings / 2, lags.end());
    return lags[readings / 2];
}

}  // namespace

TEST_CASE("process_cpu: a thread that keeps its CPU is counted to the moment of reading", "[process_cpu]") {
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
        WARN("one CPU: the spinner cannot keep a CPU of its own");
        return;
    }
    Spinner spinner;
    clockid_t spinner_clock{};
    REQUIRE(pthread_getcpuclockid(spinner.thread, &spinner_clock) == 0);
    sleep_ms(20);  // the spinner settles on a CPU of its own, if it gets one
    ProcessCpu cpu;
    // By the process clock alone the spinner is counted about 1 ms late where it keeps its CPU
    // (0.5-1 ms on this machine, HZ=250), less where co-runners take its CPU now and then (a
    // switch counts it too). Read exactly, a few microseconds late, loaded or not.
    std::uint64_t plain = median_lag_ns([] { return clock_ns(CLOCK_PROCESS_CPUTIME_ID); }, spinner_clock, 100);
    std::uint64_t exact = median_lag_ns([&] { return cpu.read_ns(); }, spinner_clock, 100);
    INFO("the spinner counted late by " << exact / 1000 << " us read exactly, " << plain / 1000
                                        << " us by the process clock alone (medians)");
    REQUIRE(exact < 200'000);
}

TEST_CASE("process_cpu: readings never go back, and a thread's end keeps its time", "[process_cpu]") {
    ProcessCpu cpu;
    std::uint64_t last = cpu.read_ns();
    for (int round = 0; round < 3; ++round) {
        {
            Spinner spinner;
            sleep_ms(5);
            std::uint64_t now = cpu.read_ns();
            REQUIRE(now >= last);
            last = now;
        }  // the spinner ended: its clock can no longer be read, its time stays in the process's
        std::uint64_t now = cpu.read_ns();
        REQUIRE(now >= last);
        last = now;
    }
}
