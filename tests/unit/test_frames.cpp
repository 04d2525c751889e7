// libomp's per-task callbacks move a thread's frame stack alone while untimed
// (adapters/omp/thread_state.hpp: frames_only, bare_frames). For any stack, any current task and
// any change, that gives the same frames as the full path (drop_parts_not_of, then push_frame or
// pop_frame), or declines and leaves the stack as it was: where the depth would reach 0 (an
// external thread's outer interval moves there) or pass the tracked frames.
#include <catch2/catch.hpp>

#include <random>

#include "adapters/omp/thread_state.hpp"

using apshim::omp_adapter::FrameChange;
using apshim::omp_adapter::State;
using apshim::omp_adapter::ThreadState;

namespace {

State g_state;  // large (1024 slots): not on the stack

bool same_frames(const ThreadState& a, const ThreadState& b) {
    if (a.depth != b.depth) return false;
    for (int i = 0; i < a.depth && i < ThreadState::kTracked; ++i) {
        if (a.tags[i] != b.tags[i] || apshim::omp_adapter::frame_is_wait(a, i) != apshim::omp_adapter::frame_is_wait(b, i))
            return false;
        if (((a.task_bits[i / 64] ^ b.task_bits[i / 64]) >> (i % 64)) & 1u) return false;
    }
    return true;
}

// The full path's change, as ompt_hooks.cpp makes it.
void full_change(ThreadState& t, const void* current, FrameChange change, const void* tag) {
    apshim::omp_adapter::drop_parts_not_of(g_state, t, current);
    switch (change) {
    case FrameChange::none: break;
    case FrameChange::push_task: apshim::omp_adapter::push_frame(g_state, t, false, tag, true); break;
    case FrameChange::push_wait: apshim::omp_adapter::push_frame(g_state, t, true); break;
    case FrameChange::pop: apshim::omp_adapter::pop_frame(g_state, t); break;
    }
}

void run_walk(bool external, unsigned seed) {
    static int task_data[4];
    const void* tasks[4] = {&task_data[0], &task_data[1], &task_data[2], &task_data[3]};
    std::mt19937 rng(seed);
    ThreadState t;
    apshim::omp_adapter::attach(g_state, t);
    REQUIRE(t.counters != nullptr);
    t.external = external;
    int bare_done = 0, declined = 0;
    for (int step = 0; step < 20000; ++step) {
        REQUIRE(apshim::omp_adapter::frames_only(g_state, t));
        // Now and then a deep stack (task recursion past the tracked frames), or back to none.
        if (step % 2000 == 1000) {
            for (int i = 0; i < ThreadState::kTracked + 3; ++i) full_change(t, t.depth ? t.tags[std::min(t.depth, ThreadState::kTracked) - 1] : nullptr, FrameChange::push_task, tasks[i % 4]);
        }
        const void* current = tasks[rng() % 4];
        if (t.depth > 0 && t.depth <= ThreadState::kTracked && rng() % 2)
            current = t.tags[t.depth - 1] ? t.tags[t.depth - 1] : current;  // usually the task on top
        unsigned pick = rng() % 20;
        FrameChange change = pick < 8 ? FrameChange::push_task : pick < 11 ? FrameChange::push_wait
                           : pick < 18 ? FrameChange::pop : FrameChange::none;
        const void* tag = change == FrameChange::push_task ? tasks[rng() % 4] : nullptr;
        ThreadState before = t, bare = t;
        bool done = apshim::omp_adapter::bare_frames(bare, current, change, tag);
        full_change(t, current, change, tag);
        if (done) {
            ++bare_done;
            INFO("step " << step << " depth " << before.depth << " -> " << t.depth);
            REQUIRE(same_frames(bare, t));
            // Depth 0 left or reached moves an external thread's outer interval: never bare.
            REQUIRE((before.depth == 0) == (bare.depth == 0));
        } else {
            ++declined;
            REQUIRE(same_frames(bare, before));
        }
    }
    // Both ways were taken many times, so the comparison is not empty.
    CHECK(bare_done > 10000);
    CHECK(declined > 100);
}

}  // namespace

TEST_CASE("untimed, the bare frame change equals the full path's, or declines and changes nothing", "[frames]") {
    run_walk(/*external=*/false, 1);
    run_walk(/*external=*/true, 2);
}
