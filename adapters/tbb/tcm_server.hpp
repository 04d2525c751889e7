// The shim as oneTBB's thread composability manager (TCM): oneTBB's supported throttle point.
//
// oneTBB 2021.11 and later (the PyPI `tbb` wheel's 2022.x; not Debian 12's 2021.8) declare the TCM
// functions (tcmConnect, tcmRequestPermit, ...) weak, and link them from `libtcm.so.1` when that
// library is installed, else from the global scope: from the preloaded shim, which defines them
// (tcm_server.cpp). TBB then asks, per arena, for a permit of [min, max] workers whenever the
// arena's demand changes, and keeps the arena at the workers it is granted; when a grant falls,
// surplus workers leave the arena at TBB's own safe points, and the shim calls TBB back to say so.
//
// Grants follow the allotment: the job's arenas together get `allotment - 1` workers (the main
// thread is the other one), never fewer than one worker for an arena that asks for any (TBB's
// soft limit at 0 workers hangs programs whose work only a worker can take: the same floor as the
// shim's global_control, tbb_adapter.cpp) and never more than asked. Where the shim does not cap
// TBB (no allotment yet, the program set max_allowed_parallelism itself, the stall valve, a
// finalize in progress, exit) every arena gets what it asks for.
//
// Off when the shim is disabled or the user set TCM_ENABLE=0 (the variable Intel's libtcm reads):
// tcmConnect then fails, or answers from a real libtcm defined behind the shim, and TBB keeps its
// own market, as without TCM.
#pragma once

namespace apshim::tbb_adapter::tcm {

// Controller thread: the workers TBB's arenas may have together from now on, or -1 for "what they
// ask". Calls TBB back (outside any lock of the shim's) for every permit whose grant changed.
void set_workers(int workers) noexcept;

// Grants again from the workers last set and TBB's own limit now, calling TBB back for every
// change: after the program created a global_control (task_hooks.cpp), which oneTBB does not pass
// on to a TCM. Any thread outside TBB's locks.
void regrant() noexcept;

// Connected clients (TBB's thread-composability layers) and live permits, for the log and tests.
int clients() noexcept;

// In a fork() child: the parent's permits belong to the parent's TBB.
void after_fork_child() noexcept;

}  // namespace apshim::tbb_adapter::tcm
