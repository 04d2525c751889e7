// Regions that need every thread they asked for, whatever the program allowed.
//
// OMP_DYNAMIC=true (or omp_set_dynamic(1)) lets the runtime, and so the shim, give a region fewer
// threads than it asked for, and a program that set it should cope. A library inside it may not:
// Debian's OpenMP build of OpenBLAS (libopenblas0-openmp, under NumPy, SciPy, Octave) splits each
// call into omp_get_max_threads() pieces that wait for each other in sched_yield loops, and a team
// smaller than that waits for ever: SciPy under the shim with OMP_DYNAMIC=true at allotment 1, and
// natively under load once libgomp's own dynamic adjustment (the load average) gave it one thread,
// was still waiting after 11 minutes (docs/enforcement.md, thirty-fifth and thirty-sixth
// sessions). A team of the size asked for is always allowed, so an outermost region forked from
// such a library keeps it: the shim does not shrink it, and for libgomp the forking thread's
// dyn-var is off for that one region, so that libgomp's load-average rule does not shrink it
// either (the allotment is still enforced by confinement). Known today, by file name (and, by
// construct, libgomp's `parallel sections` of two or more sections: sections_may_meet below; and
// Eigen's products, which take any team but spin, by the function that forks: spins_at_meetings):
//  - OpenBLAS: whole teams only (a team of one waits for ever too);
//  - BLIS (libblis4-openmp, AMD's AOCL-BLIS): a whole team or a team of one. Each level-3 call
//    forks num_threads(n) and aborts the program on any other size ("A different number of
//    threads was created than was requested", bli_l3_decor_openmp.c): NumPy on BLIS with
//    OMP_NUM_THREADS=4 and OMP_DYNAMIC=true got teams of 2 under the shim on 2 CPUs and died of
//    SIGABRT, as it does natively once libgomp's load-average rule gives it 2. Where the shim
//    would give such a region fewer threads than it asked for, it gets one: BLIS's threads meet
//    in spin-waits without a yield, so its whole team on fewer CPUs is the slowest choice (the
//    four on 2 CPUs: 2.1-5 s against 0.43 s with one thread).
#pragma once

#include "adapters/omp/omp_state.hpp"

namespace apshim::omp_adapter {

// What a library's regions need of their teams (see above). `any_spinning`: any size, but its
// threads meet in spin-waits (Eigen's products, spins_at_meetings below).
enum class TeamNeed { any, whole, whole_or_one, any_spinning };

// What the library holding the code at `site` (a fork's return address) needs. dladdr once per
// call site, then a cached answer (next_fn.hpp: SiteCache); any thread.
TeamNeed team_need(const void* site) noexcept;

using SetDynamic = void (*)(int);

// Both runtimes' fork hooks, at an outermost fork asking for `requested` threads (0: the default)
// whose region needs `need` (team_need, fork_team_need), before sizing the team, where the program
// allowed smaller teams. Where it needs whole teams, withholds both permissions (`icvs.dynamic`,
// `opted_in`) and, where dyn-var was on and the caller can turn it back on when the region ends
// (`can_turn_back`), turns the forking thread's off with the runtime's own omp_set_dynamic
// (`set_dynamic`: OmpQueries::set_dynamic, looked up only here), so that the runtime's own rule
// (libgomp's CPUs of the mask) cannot shrink it either. Where it takes a whole team or one and the
// shim (`s`) would give it fewer than it asked for, `requested` becomes 1 instead, permissions
// withheld. Returns what to call with 1 when the region ends, or null where dyn-var was left as it
// was.
template <typename SetDynamicFn>
SetDynamic keep_whole_team(TeamNeed need, const State& s, int& requested, ForkIcvs& icvs, bool& opted_in,
                           SetDynamicFn& set_dynamic, bool can_turn_back) noexcept {
    if (!(icvs.dynamic || opted_in)) return nullptr;
    if (need == TeamNeed::any || need == TeamNeed::any_spinning) return nullptr;
    if (need == TeamNeed::whole_or_one &&
        team_size(s, requested, icvs, opted_in) < whole_team_asked(requested, icvs, opted_in)) {
        requested = 1;
        opted_in = icvs.dynamic = false;
        return nullptr;
    }
    SetDynamic off = icvs.dynamic && can_turn_back ? set_dynamic.get() : nullptr;
    if (off) off(0);
    opted_in = icvs.dynamic = false;
    return off;
}

// BLIS's threads also meet in spin-waits without a yield (bli_thrcomm_barrier_atomic) many times
// in each call. With fewer CPUs than threads, as confinement at a smaller allotment gives a team
// whose size OpenMP promises (dyn-var off: BLIS's num_threads(n) is kept), each meeting lasts
// until the kernel preempts a spinner: a team of 2 on one CPU took 1.75 s for 15 products of
// 900 x 900 (one thread: 0.43 s), spinning the CPU it had. On a CPU per thread the same team
// uses less CPU time in all than that. So while such a region runs the job is not confined
// below its team (Sample::spinning_team, shim/controller.cpp): its threads run where they would
// without the shim.
//
// Eigen's parallel matrix products too (Eigen 3.4's `parallelize_gemm`, a header library, so in
// the program's own objects): each splits a product over the team it gets (it reads
// omp_get_num_threads(), so any size will do) and its threads wait for each other's packed blocks
// in `while (info[i].users != 0) {}` and `while (info[j].sync != k) {}`, twice per block of the
// product. R's RcppML (`nmf()`, libgomp) at allotment 1 took 14.9 s confined against 10.3 s with
// one thread, 29% of its samples in those two loops (tests/real/RESULTS.md, eighty-ninth session).
// Told by the function that forks the region (the fork's return address): the template's
// instantiations are exported from the shared objects that compile it in (OpenMx, glmmTMB, rpf,
// RcppML: weak symbols `_ZN5Eigen8internal16parallelize_gemm...`), and an executable's, which
// exports nothing, are in its file's full symbol table unless it was stripped (a program built
// from source: adapters/common/elf_symtab.hpp). A stripped executable's products stay confined.
inline bool spins_at_meetings(TeamNeed need) noexcept {
    return need == TeamNeed::whole_or_one || need == TeamNeed::any_spinning;
}

// A `parallel sections` region of two or more sections: its sections run at once, each on a thread
// of its own where the team has them, and may wait for each other in the program's own code, out
// of every hook's sight. velvet's `velveth` (Debian's velvet 1.2.10, libgomp) hands its reads from
// one section to the other through spin-waits for its whole run: natively 1.1 s, confined to one
// CPU at allotment 1 10.7 s (natively under `taskset` on one CPU 11.6 s), and with a team of one
// (APSHIM_SHRINK_TEAMS=1, natively OMP_THREAD_LIMIT=1) it waits for ever (tests/real/RESULTS.md,
// forty-fifth session). Such a region counts as a spinning team once it stays open through
// kSectionsHeldSamples of the controller's cycles with no other beginning (begin_sections_team,
// OmpAdapter::sample): a region of sections that meet stays open, confined, until the kernel lets
// each meeting through, and a long one is long anyway. Short regions of independent sections stay
// held to the allotment: tesseract's LSTM forks `parallel sections num_threads(4)` hundreds of
// times a second, each well under a cycle (real.tesseract: 1.49 CPUs at allotment 1 where every
// such region counted at once). Told apart by libgomp's GOMP_parallel_sections (its count) and
// GOMP_sections_start, and libomp's __kmpc_for_static_init_4 (the ident's sections flag, and its
// bounds).
inline bool sections_may_meet(long sections) noexcept { return sections >= 2; }

// What a region forked from `site` needs: its library's (team_need), and a whole team for a
// `parallel sections` of `sections` (0: not one) that may meet: the team of the size asked for
// (OpenMP allows it at any dyn-var), never fewer threads than sections that wait for each other.
inline TeamNeed fork_team_need(const void* site, long sections) noexcept {
    TeamNeed need = team_need(site);
    return need == TeamNeed::any && sections_may_meet(sections) ? TeamNeed::whole : need;
}

// Both runtimes' hooks, once an outermost team is sized: `team` threads that meet in spin-waits
// (`spins`: a library that spins_at_meetings() with the team OpenMP promised, the program not
// having allowed smaller teams) are counted in `s` (State::spinning_team, and State::spinning_open until
// end_spinning_team() where the hook sees the region's end: `sees_end`) if more than one. Where
// the program allowed smaller teams, a library's team is the shim's choice: one thread at an
// allotment below it (keep_whole_team), and a wider one formed before the first allotment (a
// whole team of 4 on 2 CPUs, NumPy's first product) is held to the allotment like any other.
// Returns whether it is counted open.
bool begin_spinning_team(State& s, int team, bool spins, bool sees_end) noexcept;
void end_spinning_team(State& s) noexcept;

// Both runtimes' hooks, on the forking thread of an outermost `parallel sections` region that may
// meet (sections_may_meet), once it knows the `team` of threads that run its sections at once: a
// team of more than one is counted open in `s` until end_sections_team(), and begun (State::
// sections_open, sections_begun, sections_team). Returns whether it is counted open.
bool begin_sections_team(State& s, int team) noexcept;
void end_sections_team(State& s) noexcept;
// Controller cycles (OmpAdapter::sample) a sections region stays open, no other beginning, before
// it counts as spinning: 15 ms at the default 5 ms cycle.
inline constexpr int kSectionsHeldSamples = 3;

// What the controller's samples (OmpAdapter::sample) keep from one to the next about spinning teams.
struct SpinningSeen {
    int open_team = 0;            // the widest spinning team the last sample read, open then or begun just before
    unsigned sections_begun = 0;  // State::sections_begun at the last sample
    int sections_held = 0;        // samples since, a sections region open and none begun
};

// At a controller's sample: the widest spinning team begun since the last sample, or still open
// from before, and a sections region's once it stayed open through kSectionsHeldSamples samples
// with none begun (0: none). Consumes State::spinning_team.
int spinning_team_at_sample(State& s, SpinningSeen& seen) noexcept;

// The decision for a file name (the basename of dladdr's dli_fname), exposed for the unit tests.
TeamNeed library_team_need(const char* file) noexcept;
// The decision for the (mangled) name of the function that forks the region (dladdr's dli_sname,
// null where none), exposed for the unit tests: Eigen's parallelize_gemm spins at its meetings.
TeamNeed function_team_need(const char* symbol) noexcept;

}  // namespace apshim::omp_adapter
