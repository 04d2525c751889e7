// The process's CPU time counted to the moment of reading (shim/process_cpu.hpp), where
// CLOCK_PROCESS_CPUTIME_ID counts a thread that keeps its CPU only at the kernel's ticks.
#include <catch2/catch.hpp>

#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <atomic>

#include "shim/confine.hpp"
#include "shim/process_cpu.hpp"

using apshim::ProcessCpu;

namespace {

std::uint64_t clock_ns(clockid_t c) {
    timespec ts{};
    clock_gettime(c, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
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

// Out of `intervals` of 1 ms, how many the spinner's CPU time (the reading less this thread's
// own) grew in by more than 0.1 ms.
template <class Read>
int intervals_counted(Read read, int intervals) {
    std::uint64_t before = read() - clock_ns(CLOCK_THREAD_CPUTIME_ID);
    int grew = 0;
    for (int i = 0; i < intervals; ++i) {
        sleep_ms(1);
        std::uint64_t reading = read();
        std::uint64_t others = reading - clock_ns(CLOCK_THREAD_CPUTIME_ID);
        if (others > before + 100'000) ++grew;
        before = others;
    }
    return grew;
}

}  // namespace

TEST_CASE("process_cpu: a thread that keeps its CPU is counted to the moment of reading", "[process_cpu]") {
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
        WARN("one CPU: the spinner cannot keep a CPU of its own");
        return;
    }
    Spinner spinner;
    sleep_ms(20);  // the spinner settles on a CPU of its own, if it gets one
    ProcessCpu cpu;
    // With CLOCK_PROCESS_CPUTIME_ID alone the spinner's time shows up at the ticks, in about one
    // interval in four at HZ=250 (one in ten at HZ=100) where it keeps its CPU; more where a
    // co-runner takes its CPU now and then. Read exactly, it grows in every interval it runs in.
    int plain = intervals_counted([] { return clock_ns(CLOCK_PROCESS_CPUTIME_ID); }, 100);
    int exact = intervals_counted([&] { return cpu.read_ns(); }, 100);
    INFO("intervals of 1 ms the spinner was seen running in: " << exact << " read exactly, " << plain
                                                                << " by the process clock alone");
    REQUIRE(exact >= 80);
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
