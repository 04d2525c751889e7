// libomp's per-task callbacks look at the thread once and then move its frame stack alone
// (adapters/omp/thread_state.hpp: bare_hook, bare_frames, bare_hook_done). Two threads take the
// same random walk of frame changes (task switches among them, returns from an untied part too),
// one the full way (change_frames: drop_parts_not_of, then push_frame or pop_frame, as
// ompt_hooks.cpp's slow paths do) and one the way the callbacks do (bare where they
// may, else the full way): their frames are the same at every step, and so is whether a busy
// interval and an external thread's outer interval are open, untimed and timed. Where
// bare_frames() declines (the depth would reach 0, or pass the tracked frames) it changes nothing.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

#include "adapters/omp/thread_state.hpp"

namespace omp = apshim::omp_adapter;
using omp::FrameChange;
using omp::ThreadState;

namespace {

omp::State g_state;  // large (1024 slots): not on the stack

bool same_frames(const ThreadState& a, const ThreadState& b) {
    if (a.depth != b.depth) return false;
    for (int i = 0; i < a.depth && i < ThreadState::kTracked; ++i) {
        if (a.tags[i] != b.tags[i] || omp::frame_is_wait(a, i) != omp::frame_is_wait(b, i)) return false;
        if (!omp::frame_is_wait(a, i) && a.from[i] != b.from[i]) return false;
        if (((a.task_bits[i / 64] ^ b.task_bits[i / 64]) >> (i % 64)) & 1u) return false;
    }
    return true;
}

bool busy_open(const ThreadState& t) { return t.counters->busy_since.load() != 0; }
bool outer_open(const ThreadState& t) { return t.counters->outer_since.load() != 0; }

// As ompt_hooks.cpp's callbacks: bare where they may, else the full way. True when bare.
bool hook_change(ThreadState& t, const void* current, FrameChange change, const void* tag) {
    omp::BareHook h = omp::bare_hook(g_state, t);
    if (h.may) {
        ThreadState before = t;
        if (omp::bare_frames(t, current, change, tag)) {
            // Depth 0 left or reached moves an external thread's outer interval: never bare.
            REQUIRE((before.depth == 0) == (t.depth == 0));
            omp::bare_hook_done(t, h, false);
            return true;
        }
        REQUIRE(same_frames(t, before));  // declined: nothing changed
    }
    omp::change_frames(g_state, t, current, change, tag);
    return false;
}

enum class Timing { off, on, toggled };

void run_walk(Timing timing, bool external, unsigned seed) {
    static int task_data[4];
    const void* tasks[4] = {&task_data[0], &task_data[1], &task_data[2], &task_data[3]};
    std::mt19937 rng(seed);
    g_state.timing.store(timing == Timing::on);
    ThreadState full, hooked;
    omp::attach(g_state, full);
    omp::attach(g_state, hooked);
    REQUIRE((full.counters && hooked.counters && full.counters != hooked.counters));
    full.external = hooked.external = external;
    int bare = 0, declined = 0;
    for (int step = 0; step < 20000; ++step) {
        if (timing == Timing::toggled && step % 97 == 0) g_state.timing.store(!g_state.timing.load());
        // Now and then a deep stack (task recursion past the tracked frames).
        if (step % 2000 == 1000) {
            for (int i = 0; i < ThreadState::kTracked + 3; ++i) {
                const void* top = full.depth ? full.tags[std::min(full.depth, ThreadState::kTracked) - 1] : nullptr;
                omp::change_frames(g_state, full, top, FrameChange::push_task, tasks[i % 4]);
                omp::change_frames(g_state, hooked, top, FrameChange::push_task, tasks[i % 4]);
            }
        }
        const void* current = tasks[rng() % 4];
        if (full.depth > 0 && full.depth <= ThreadState::kTracked && rng() % 2 && full.tags[full.depth - 1])
            current = full.tags[full.depth - 1];  // usually the task on top
        unsigned pick = rng() % 20;
        FrameChange change = pick < 5    ? FrameChange::push_task
                             : pick < 8  ? FrameChange::switch_task
                             : pick < 11 ? FrameChange::push_wait
                             : pick < 18 ? FrameChange::pop
                                         : FrameChange::none;
        const void* tag = change == FrameChange::push_task || change == FrameChange::switch_task ? tasks[rng() % 4] : nullptr;
        // A switch back to where the task on top began (an untied part's return), often.
        if (change == FrameChange::switch_task && rng() % 2 && full.depth > 0 && full.depth <= ThreadState::kTracked &&
            full.from[full.depth - 1] && !omp::frame_is_wait(full, full.depth - 1))
            tag = full.from[full.depth - 1];
        omp::change_frames(g_state, full, current, change, tag);
        (hook_change(hooked, current, change, tag) ? bare : declined)++;
        INFO("step " << step << " depth " << full.depth);
        REQUIRE(same_frames(hooked, full));
        if (timing != Timing::toggled) REQUIRE(busy_open(hooked) == busy_open(full));
        // Timing that comes on while the thread is busy opens no interval until a change flips it
        // idle and back: within one callback the full path sees that, the bare one does not (one
        // interval fewer, accuracy). Never the other way: an interval left open when timing went
        // off is closed by both at their next frame change.
        REQUIRE((!busy_open(hooked) || busy_open(full)));
        if (timing == Timing::on) REQUIRE(busy_open(full) == omp::is_busy(full));
        if (external) REQUIRE(outer_open(hooked) == outer_open(full));
    }
    // Both ways were taken many times, so the comparison is not empty.
    CHECK(bare > 10000);
    CHECK(declined > 100);
    g_state.timing.store(false);
}

}  // namespace

TEST_CASE("a callback's bare frame change equals the full path's, untimed and timed", "[frames]") {
    run_walk(Timing::off, /*external=*/false, 1);
    run_walk(Timing::off, /*external=*/true, 2);
    run_walk(Timing::on, /*external=*/false, 3);
    run_walk(Timing::on, /*external=*/true, 4);
    run_walk(Timing::toggled, /*external=*/true, 5);
}

// libomp 14's events for an untied task's parts (ompt_hooks.cpp: change_at), as BOTS' untied
// tasks make them: a part that queues the task's next part is reported as a switch back to the
// task it began from, and the thread is then where it was (in its barrier, in a taskwait), not in
// a task. A part run at once from its own queueing is a switch from the task to itself.
TEST_CASE("an untied task's part returns to where it began", "[frames]") {
    static int implicit, t1, c1;
    ThreadState t;
    omp::attach(g_state, t);
    omp::change_frames(g_state, t, &implicit, FrameChange::push_task, &implicit);  // the region's share
    omp::change_frames(g_state, t, &implicit, FrameChange::push_wait);              // its barrier
    auto in_wait = [&] { return t.depth > 0 && omp::frame_is_wait(t, t.depth - 1); };
    // T's first part, run from the barrier, queues its next part: back in the barrier.
    omp::change_frames(g_state, t, &implicit, FrameChange::switch_task, &t1);
    CHECK(t.depth == 3);
    CHECK(omp::is_busy(t));
    omp::change_frames(g_state, t, &t1, FrameChange::switch_task, &implicit);
    CHECK(t.depth == 2);
    CHECK(in_wait());
    // Its next part waits for a child C in a taskwait; C's first part returns to T's taskwait.
    omp::change_frames(g_state, t, &implicit, FrameChange::switch_task, &t1);
    omp::change_frames(g_state, t, &t1, FrameChange::push_wait);
    omp::change_frames(g_state, t, &t1, FrameChange::switch_task, &c1);
    CHECK(t.depth == 5);
    omp::change_frames(g_state, t, &c1, FrameChange::switch_task, &t1);
    CHECK(t.depth == 4);
    CHECK(in_wait());
    // C's next part, run at once from its own queueing inside T's body (after the taskwait): over
    // T's frame, which stays; its own return to itself, then T's end, leave the barrier's wait.
    omp::change_frames(g_state, t, &t1, FrameChange::pop);  // the taskwait ends
    omp::change_frames(g_state, t, &t1, FrameChange::switch_task, &c1);
    omp::change_frames(g_state, t, &c1, FrameChange::switch_task, &t1);
    CHECK(t.depth == 3);
    omp::change_frames(g_state, t, &c1, FrameChange::switch_task, &c1);
    CHECK(t.depth == 4);
    CHECK(t.tags[2] == &t1);
    omp::change_frames(g_state, t, &c1, FrameChange::switch_task, &c1);
    CHECK(t.depth == 3);
    omp::change_frames(g_state, t, &t1, FrameChange::pop);  // T completes
    CHECK(t.depth == 2);
    CHECK(in_wait());
}
