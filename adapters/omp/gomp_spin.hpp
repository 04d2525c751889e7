// libgomp's spin-wait count: lowered while confinement shares the job's CPUs among its threads or
// a co-runner wants more processors, libgomp's own while nobody waits for the job's CPUs.
//
// A libgomp thread that waits (a barrier, the next fork, a task) spins GOMP_SPINCOUNT rounds of
// `pause` before it sleeps in the kernel, and the count is read once, when libgomp starts. Alone,
// the spin is what lets a team catch the next of thousands of short regions a second without a
// sleep and a wake-up; confined to fewer CPUs than threads, every round is taken from the very
// teammate the spinner waits for. scikit-learn's gradient boosting (tests/real/sklearn_work.py):
//
//   spin count       alone (two CPUs)   confined to one CPU   (one thread natively: 3.07 s)
//   1000 (shim's)    2.27 s             6.43 s
//   500              2.44 s             4.98 s
//   300              3.06 s             4.40 s
//   0                the fit 2.7x slower than at 1000; confined 2.8 s
// (bench/results/2026-11-25f-sklearn-dev2core). Two such fits side by side: 7.31 s mean response
// with 1000 throughout, 3.99 s with this; natively 12.3 s.
//
// No count serves both, and libgomp has no interface to change it, so the shim changes it in
// libgomp's memory, as waiting.hpp's rule says (while no other job wants the job's CPUs, back to
// libgomp's own 300 000: a wait then takes nothing from anyone, and a program with serial code
// of tens of microseconds to milliseconds between regions does not sleep and wake its team at
// each one). The variable is found once by its value, the shim's own default (1000), beside
// libgomp's count for oversubscription (100, what libgomp derives from it; next to it, or one
// variable away in the GCC 8 libgomp that PyPI wheels vendor), in libgomp's writable data.
// Exactly one such pair, outside the data libgomp's loader made read-only, or the shim leaves
// that libgomp alone (and says so at info level). Both counts follow: libgomp spins the second
// instead whenever its threads outnumber the CPUs it saw at its start. Every copy of libgomp
// that the program's regions go to is followed (Debian's under NumPy's OpenBLAS beside a wheel's
// own): the first one called, and those next_fn's RuntimeCopies notes. Only where the shim chose
// the count: a user's GOMP_SPINCOUNT or OMP_WAIT_POLICY is kept as it is.
#pragma once

#include <span>

#include "adapters/omp/waiting.hpp"

namespace apshim::omp_adapter {

// Controller thread, every cycle of the libgomp adapter: both counts, in every copy, as `wait`
// says (none: 0 and 0; shim: the shim's 1000 and the 100 libgomp derived from it; runtime:
// libgomp's own 300 000 and 100). `copies`: an address inside each libgomp the program's regions
// went to so far (null entries: none yet); a copy not seen before is searched once.
void gomp_spin_follow(Waiting wait, std::span<const void* const> copies) noexcept;

// The libgomp the program's first region went to (its GOMP_parallel, gomp_hooks.cpp), or null.
const void* gomp_first_called() noexcept;

// The shim's GOMP_SPINCOUNT as libgomp read it (omp_env.cpp), or 0 when the user chose the
// waiting (GOMP_SPINCOUNT, OMP_WAIT_POLICY) or the shim is disabled.
unsigned long long shim_gomp_spin_count() noexcept;

}  // namespace apshim::omp_adapter
