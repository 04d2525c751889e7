"""The confinement check's bounded windows end at their bound, not at the next cycle.

With APSHIM_CHECK_BOUND (on by default) the check's start ends once it has used kStartNs of CPU
beyond one CPU, a probe once it has used kProbeNs beyond its CPUs (shim/confine_check.hpp). On 16
CPUs one 5 ms cycle at full width is 75 ms beyond one CPU, so a window stepped once a cycle ran
up to a cycle past its bound, and the job's first cycle ran unconfined before the start even
began (sixty-fifth session, bench/results/2026-12-04c-device16core). Now the start begins at the
controller's first look (ConfineCheck::begin), and while a bounded window is open the controller
reads the process's CPU time every millisecond and ends its cycle as soon as the window has spent
its bound.

On 2 CPUs a window's surplus grows no faster than the wall clock, so the test makes the cycle
long instead: est_cycle 40 ms, where a 15 ms probe at 2 CPUs is spent 15-20 ms into a cycle. A
real OpenMP program (tests/omp/omp_work, short static-loop regions, which mark progress) runs
traced beside a stand-in co-runner holding the rest of a P = 2 table (allotment 1 from its first
look), its width and idle checks off and without idle processors. Checked in the trace:
- its start, begun at the first look, has ended by the first row after 100 ms (before: it began at
  the first row, 40 ms, and ran to the row after 140 ms);
- some probe ended in an early cycle, less than 30 ms after the row that began it (before: every
  cycle lasted 40 ms or more);
- an early cycle is followed by another only in the start, and never by two (at most
  kMaxEarlyCycles between cycle ends: one at the bound, and in the start one more where its
  stretch of construct read markless at a peek but the cycle made marks, peek_construct);
- the program's answer is the native one.

Then the same beside the co-runner, for one long region of static loops that makes no progress
marks (`omp_work static 1 20000`: 64 items of 20 ms, as NPB EP's timed loop): the start's stretch
of construct begins at the first peek inside it and the start ends at the peek where it has used
kQuietStartSurplusNs (40 ms) beyond one CPU (ConfineCheck::peek_construct). Checked: the start's
CPU beyond one CPU, over its rows, stays under 50 ms (40.2-40.7 in six runs by hand; when the
stretch began at the first cycle end in the region, 69-100), and the answer is the native one.
"""
import sys

from apshim_test import Check, CoRunner, Shim, checksum, phases_in_order, require_two_cpus

require_two_cpus("a second CPU for the program's windows to spend")
build, prog = sys.argv[1], sys.argv[2]
shim = Shim(build)
check = Check("shim.windows_end_early")
CYCLE_MS = 40
EARLY_MS = 30  # a row this soon after the one before it ended its cycle early
args = [prog, "static", "600", "100"]  # 600 regions of 64 items of 100 us: 2-4 s
native = shim.native(args, timeout=120)
check.expect(native.returncode == 0, f"runs natively ({native.returncode}: {native.stdout.strip()})")
env = shim.env(P=2, est_cycle_ms=CYCLE_MS, trace=shim.path("trace-%p.csv"), APSHIM_WIDTH_CHECK=0, APSHIM_IDLE_CHECK=0,
               APSHIM_USE_IDLE=0)
with CoRunner(shim, {k: v for k, v in env.items() if k not in ("LD_PRELOAD", "APSHIM_TRACE")}, P=2):
    run = shim.run(args, env, timeout=120)
check.expect(run.returncode == 0 and checksum(run.stdout) is not None and checksum(run.stdout) == checksum(native.stdout),
             f"the native answer ({run.returncode}: {run.stdout.strip()} against {native.stdout.strip()}; {run.stderr.strip()})")

rows = shim.trace_rows("trace-")
phases = phases_in_order(rows)
check.expect(len(rows) > 20 and rows[0]["allotment"] == 1 and rows[0]["confine_check"] == "start",
             f"the trace begins at allotment 1, in the start ({len(rows)} rows; phases {phases[:12]})")
if rows:
    after_start = next((r for r in rows if r["confine_check"] != "start"), None)
    check.expect(after_start is not None and after_start["time_ms"] <= 100 + CYCLE_MS / 2 + 5,
                 f"the start began at the first look and ended by the first row after 100 ms "
                 f"({after_start and after_start['time_ms']:.1f} ms)")
    gaps = [(rows[i - 1], r, r["time_ms"] - rows[i - 1]["time_ms"]) for i, r in enumerate(rows) if i > 0]
    probes = [gap for prev, r, gap in gaps if prev["confine_check"] == "probe" and r["confine_check"] != "probe"]
    check.expect(any(gap < EARLY_MS for gap in probes),
                 f"some probe ended less than {EARLY_MS} ms after the row that began it (probes lasted {probes} ms)")
    early = [(gap < EARLY_MS, prev["confine_check"]) for prev, _, gap in gaps]
    pairs = [(a, b) for a, b in zip(early, early[1:]) if a[0] and b[0]]
    triples = [1 for a, b, c in zip(early, early[1:], early[2:]) if a[0] and b[0] and c[0]]
    check.expect(all(a[1] == "start" for a, _ in pairs) and not triples,
                 f"an early cycle is followed by another only in the start, never by two "
                 f"(early cycles: {[(round(g), prev['confine_check']) for prev, _, g in gaps if g < EARLY_MS]})")

# One long markless region: the start ends at the peek where its stretch reads quiet.
long_args = [prog, "static", "1", "20000"]
long_native = shim.native(long_args, timeout=120)
check.expect(long_native.returncode == 0, f"the long region runs natively ({long_native.returncode})")
long_env = shim.env(P=2, gat=shim.path("gat-long"), est_cycle_ms=CYCLE_MS, trace=shim.path("long-%p.csv"),
                    APSHIM_WIDTH_CHECK=0, APSHIM_IDLE_CHECK=0, APSHIM_USE_IDLE=0)
with CoRunner(shim, {k: v for k, v in long_env.items() if k not in ("LD_PRELOAD", "APSHIM_TRACE")}, P=2):
    long_run = shim.run(long_args, long_env, timeout=120)
check.expect(long_run.returncode == 0 and checksum(long_run.stdout) is not None
             and checksum(long_run.stdout) == checksum(long_native.stdout),
             f"the long region's native answer ({long_run.returncode}: {long_run.stdout.strip()} against "
             f"{long_native.stdout.strip()}; {long_run.stderr.strip()})")
long_rows = shim.trace_rows("long-")
ended = next((i for i, r in enumerate(long_rows) if r["confine_check"] != "start"), None)
check.expect(bool(long_rows) and long_rows[0]["confine_check"] == "start" and ended is not None,
             f"the long region's trace begins in the start, which ends ({phases_in_order(long_rows)[:6]})")
if long_rows and ended is not None:
    start_cpu = sum(r["cpu_ms"] for r in long_rows[:ended + 1])
    beyond = start_cpu - long_rows[ended]["time_ms"]
    check.expect(beyond < 50, f"the long region's start used under 50 ms of CPU beyond one CPU ({beyond:.1f} ms: "
                 f"{start_cpu:.1f} ms in {long_rows[ended]['time_ms']:.1f})")
check.done()
