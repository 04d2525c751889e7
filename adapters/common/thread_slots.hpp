// Per-thread counters in padded cache lines, registered lock-free on a thread's first event.
//
// Hooks write only their own slot (relaxed stores by the owner); the controller sums all slots.
// A thread that claims its slot with claim(&its_pointer) gives it back when it exits (a pthread
// key destructor, registered on the claim: nothing runs per task), onto a lock-free free list.
// A slot keeps its totals across owners: the next owner adds to them, so the controller's
// "difference since last sample" per slot index stays right (never negative) whoever owns the
// slot. N slots cover the threads alive at once; a thread beyond that is not measured (its
// slot pointer is null) and overflowed() says so to the controller, which may log it.
//
// A slot's owner word says who may give it back, and only that one does: the owning thread
// (release, at its exit), or, for a slot claimed for another thread that has not adopted it
// yet (marked awaiting_), whoever wins the compare-and-swap away from that mark (adopt, or the
// controller's take_back_if_ended). A slot is pushed on the free list once per claim.
#pragma once

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

#include "adapters/common/busy.hpp"
#include "adapters/common/clock.hpp"

namespace apshim {

// The part of ThreadSlots that does not depend on N: the free list (a Treiber stack of slot
// indices whose head carries a tag against ABA) and the thread-exit key.
class SlotPool {
public:
    // Gives `c` back if `owner` still owns it: folds an open busy interval into its total
    // (the owner is the calling thread, so the plain load + store of the hooks is right), then
    // pushes it on the free list.
    void release(ThreadCounters* c, ThreadCounters** owner) noexcept {
        ThreadCounters** expected = owner;
        if (!c || !owner || !c->owner.compare_exchange_strong(expected, nullptr, std::memory_order_acq_rel)) return;
        if (c->busy_since.load(std::memory_order_relaxed)) end_busy(c, now_ticks());
        if (c->outer_since.load(std::memory_order_relaxed)) end_outer(c, now_ticks());
        // This thread's CPU time stays counted after its clock is gone (SlotSampler): the id is
        // cleared first, so the controller never counts both.
        c->tid.store(0, std::memory_order_release);
        std::uint64_t cpu_ns;
        if (read_clock_ns(CLOCK_THREAD_CPUTIME_ID, cpu_ns))
            c->exited_cpu_ns.store(c->exited_cpu_ns.load(std::memory_order_relaxed) + cpu_ns, std::memory_order_release);
        push(c);
    }

    // The calling thread takes over `c`, claimed for it by ThreadSlots::claim_for: given back when
    // it exits. False when the controller took it back first (take_back_if_ended; it is marked
    // owned until claimed again), or the process is out of thread keys: the thread then claims
    // another.
    bool adopt(ThreadCounters* c, ThreadCounters** owner) noexcept {
        int k = exit_key();
        if (k < 0) return false;
        ThreadCounters** expected = &awaiting_;
        if (!c->owner.compare_exchange_strong(expected, owner, std::memory_order_acq_rel)) return false;
        pthread_setspecific(static_cast<pthread_key_t>(k), owner);
        return true;
    }

    // True once a thread found every slot taken (it runs unmeasured).
    bool overflowed() const noexcept { return overflowed_.load(std::memory_order_relaxed); }

protected:
    // Puts `c`, owned by nobody now, on the free list.
    void push(ThreadCounters* c) noexcept {
        std::uint64_t head = free_head_.load(std::memory_order_relaxed);
        for (;;) {
            c->next_free.store(static_cast<std::int32_t>(head & 0xffffffffu) - 1, std::memory_order_relaxed);
            std::uint64_t next = (((head >> 32) + 1) << 32) | static_cast<std::uint32_t>(c->index + 1);
            if (free_head_.compare_exchange_weak(head, next, std::memory_order_release, std::memory_order_relaxed)) return;
        }
    }

    // Index of a free slot taken off the list, or -1.
    int pop(ThreadCounters* slots) noexcept {
        std::uint64_t head = free_head_.load(std::memory_order_acquire);
        while ((head & 0xffffffffu) != 0) {
            int i = static_cast<int>(head & 0xffffffffu) - 1;
            std::int32_t next = slots[i].next_free.load(std::memory_order_relaxed);
            std::uint64_t want = (((head >> 32) + 1) << 32) | static_cast<std::uint32_t>(next + 1);
            if (free_head_.compare_exchange_weak(head, want, std::memory_order_acquire, std::memory_order_acquire)) return i;
        }
        return -1;
    }

    // Makes the calling thread give `c` back when it exits (and clear *owner first).
    void release_at_exit(ThreadCounters* c, ThreadCounters** owner) noexcept {
        int k = exit_key();
        if (k < 0) return;  // out of keys: never given back
        c->owner.store(owner, std::memory_order_release);
        pthread_setspecific(static_cast<pthread_key_t>(k), owner);
    }

    // Owners no thread can have: a slot claimed for a thread that has not adopted it yet, and
    // the controller's mark on a slot it is taking back.
    static inline ThreadCounters* awaiting_ = nullptr;
    static inline ThreadCounters* taking_back_ = nullptr;

    void reset_free_list() noexcept { free_head_.store(0); }

    void note_overflow() noexcept {
        if (!overflowed_.load(std::memory_order_relaxed)) overflowed_.store(true, std::memory_order_relaxed);
    }

private:
    // The thread-exit key, created on first use; -1 when the process is out of keys.
    int exit_key() noexcept {
        int k = key_.load(std::memory_order_acquire);
        if (k >= 0) return k;
        pthread_key_t created;
        if (pthread_key_create(&created, &thread_exited) != 0) return -1;
        int expected = -1;
        if (key_.compare_exchange_strong(expected, static_cast<int>(created), std::memory_order_acq_rel)) return static_cast<int>(created);
        pthread_key_delete(created);
        return expected;
    }

    // The key's destructor, on the exiting thread: `value` is that thread's pointer to its slot.
    // It is cleared first, so a hook running later in this thread's exit claims afresh instead
    // of writing into a slot another thread may own by then.
    static void thread_exited(void* value) noexcept {
        auto** owner = static_cast<ThreadCounters**>(value);
        ThreadCounters* c = *owner;
        *owner = nullptr;
        if (c && c->pool) c->pool->release(c, owner);
    }

    std::atomic<std::uint64_t> free_head_{0};  // tag << 32 | (index + 1), 0 = empty
    std::atomic<int> key_{-1};
    std::atomic<bool> overflowed_{false};
};

template <int N = 1024>
class ThreadSlots : public SlotPool {
public:
    // A slot for the calling thread, or null when all N are taken. With `owner` (the address of
    // the thread's own pointer to its slot, where the result is stored), the slot is given back
    // when the thread exits; without it, never.
    ThreadCounters* claim(ThreadCounters** owner = nullptr) noexcept {
        // Once per thread (not per task): its CPU clock, for untimed cycles (busy.hpp).
        clockid_t clock;
        bool clocked = pthread_getcpuclockid(pthread_self(), &clock) == 0;
        ThreadCounters* c = take(clocked ? static_cast<int>(syscall(SYS_gettid)) : 0, clock, nullptr);
        if (c && owner) release_at_exit(c, owner);
        return c;
    }
    // A slot for another thread of this process, known by its id and CPU clock (oneTBB's workers,
    // claimed by the thread that creates them: adapters/tbb/thread_hooks.cpp), marked awaiting_
    // until that thread adopts it (adopt, on its first event); null when all N are taken. If the
    // thread ends without adopting it, the controller takes it back (take_back_if_ended).
    ThreadCounters* claim_for(int tid, clockid_t clock) noexcept { return take(tid, clock, &awaiting_); }
    // The slot of the live thread `tid` (claimed by it, or for it), or null.
    ThreadCounters* find(int tid) noexcept {
        for (int i = 0, n = used(); i < n; ++i)
            if (slots_[i].tid.load(std::memory_order_acquire) == tid) return &slots_[i];
        return nullptr;
    }
    // Controller: a slot claimed for a thread that ended before adopting it stops being read (its
    // thread id may come back as another thread's) and goes back on the free list. oneTBB ends
    // and recreates its workers whenever the last application thread leaves it: a program whose
    // threads come and go created a worker per thread, most of them ended before their first
    // event, and their slots were never given back (under TSan's timing, 1100 short-lived threads
    // used up all 1024; tests/tbb/test_thread_churn.py). `counted_cpu_ns`: the slot's CPU total as
    // the controller last counted it, kept as the earlier owners' total, so that the next owner's
    // time is counted from there. True when `c` was such a slot.
    // Only a slot still marked awaiting_: its id is that thread's until adopt() or this unmarks
    // it, so an unreadable clock means that thread ended. Until 2026-11-29 any slot with a null
    // owner qualified: a thread giving its slot back at exit clears the owner, then the id, and
    // a look between the two read the id, then no clock (the id had just gone), and pushed the
    // slot a second time; two threads later shared it (TSan in CI, mixed.one_allotment: two
    // program threads forking OpenMP regions wrote the same slot).
    bool take_back_if_ended(ThreadCounters& c, std::uint64_t counted_cpu_ns) noexcept {
        std::uint64_t ns;
        if (c.owner.load(std::memory_order_acquire) != &awaiting_ || read_owner_cpu(c, ns)) return false;
        ThreadCounters** expected = &awaiting_;
        if (!c.owner.compare_exchange_strong(expected, &taking_back_, std::memory_order_acq_rel)) return false;  // adopted
        c.tid.store(0, std::memory_order_release);
        c.exited_cpu_ns.store(counted_cpu_ns, std::memory_order_release);
        push(&c);  // still marked, so that no adopt() can take it while it is free (take() clears it)
        return true;
    }
    int used() const noexcept {
        int u = used_.load(std::memory_order_acquire);
        return u < N ? u : N;
    }
    ThreadCounters& operator[](int i) noexcept { return slots_[i]; }
    // After fork only the forking thread survives: forget every slot (the forking thread's
    // exit key may still name its old slot: with no owner recorded, it is not given back).
    void reset_after_fork() noexcept {
        for (int i = 0; i < used(); ++i) {
            slots_[i].busy_ns.store(0);
            slots_[i].busy_since.store(0);
            slots_[i].events.store(0);
            slots_[i].marks.store(0);
            slots_[i].owner.store(nullptr);
            slots_[i].next_free.store(-1);
            slots_[i].tid.store(0);
            slots_[i].exited_cpu_ns.store(0);
            slots_[i].outer_ns.store(0);
            slots_[i].outer_since.store(0);
            slots_[i].external.store(0);
            slots_[i].in_task.store(0);
            slots_[i].worker.store(0);
        }
        reset_free_list();
        used_.store(0);
    }

    // Busy time of all threads up to `now`, counting open intervals up to now.
    std::uint64_t total_busy(std::uint64_t now) noexcept {
        std::uint64_t sum = 0;
        for (int i = 0, n = used(); i < n; ++i) sum += busy_until(slots_[i], now);
        return sum;
    }
    std::uint64_t total_events() noexcept { return total(&ThreadCounters::events); }
    std::uint64_t total_marks() noexcept { return total(&ThreadCounters::marks); }
    std::uint64_t total_region_ends() noexcept { return total(&ThreadCounters::region_ends); }

private:
    // One owner-written counter summed over all slots.
    std::uint64_t total(std::atomic<std::uint64_t> ThreadCounters::*counter) noexcept {
        std::uint64_t sum = 0;
        for (int i = 0, n = used(); i < n; ++i) sum += (slots_[i].*counter).load(std::memory_order_relaxed);
        return sum;
    }

    // A free or never-used slot for thread `tid` (0: its clock is unknown), owned by `owner` (null:
    // nobody yet; &awaiting_: claimed for thread `tid`).
    ThreadCounters* take(int tid, clockid_t clock, ThreadCounters** owner) noexcept {
        int i = pop(slots_);
        if (i < 0 && used_.load(std::memory_order_relaxed) < N) i = used_.fetch_add(1, std::memory_order_acq_rel);
        if (i < 0 || i >= N) {
            note_overflow();
            return nullptr;
        }
        ThreadCounters* c = &slots_[i];
        c->pool = this;
        c->index = i;
        c->external.store(0, std::memory_order_relaxed);
        c->in_task.store(0, std::memory_order_relaxed);
        c->worker.store(0, std::memory_order_relaxed);
        c->owner.store(owner, std::memory_order_relaxed);
        if (tid) c->cpu_clock.store(clock, std::memory_order_relaxed);
        c->tid.store(tid, std::memory_order_release);
        return c;
    }

    std::atomic<int> used_{0};
    ThreadCounters slots_[N];
};

}  // namespace apshim
