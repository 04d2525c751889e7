#!/usr/bin/env python3
"""Fault campaign: many co-running jobs under the shim with a private table while jobs are
killed (SIGKILL / SIGTERM) or stopped for a while (SIGSTOP, then SIGCONT: Ctrl-Z, a batch
system's gang scheduling; sometimes inside an update, holding the table's lock) at random
instants and short jobs churn, and while fault programs
(tests/fault/fault_tbb.cpp, fault_omp.c built with gcc and clang) fork with and without exec and
call exit() from inside parallel regions and tasks, from worker threads and from the master while
others run or are parked. After every step the table's invariants are checked, and every job that
was not killed must finish with the right answer (children included).

    tests/fault/campaign.py BUILD_DIR [--steps N] [--seed S] [--P N]
                            [--kinds gat,tbb,omp,gomp,ftbb,fomp,fgomp] [--results FILE]

Invariants (from `apshim status --json`, a snapshot taken under the table lock):
  - every live job holds >= 1 processor; the sum of allotments <= P while jobs <= P;
  - allotments are fair, efficient and conservative (Sen §5.1) with respect to the rows' desires;
  - (these two over the jobs that are not away: a job silent for 1 s, stopped, holds none; a
    snapshot in which a job has gone away since the last DP run, still holding some, is skipped);
  - no row of a dead process is still there once a live job has updated the table more than two
    est_cycles after the death (every update reclaims rows of processes gone, and one at least
    every est_cycle checks against /proc, zombies included, the rows not updated for an
    est_cycle: a job's last update was before its death); updates are dated by the
    rows' heartbeats (`apshim status`'s HEARTBEAT column), so a starved machine cannot fake one;
  - no lost rows: a stand-in table job keeps its row from its join until it leaves.
Rows of processes we did not start (children that fault programs fork, with or without exec)
obey the same dead-row rule; a child is dead from the first check that finds it gone or a zombie.
The campaign is a child subreaper: children orphaned by a killed parent are reaped here and must
exit 0 within the same 60 s as every job.
Exit status 0 iff there were no invariant violations, no wrong answers and no hangs.
"""
import argparse
import ctypes
import os
import random
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from apshim_test import Shim, keep_files, sanitizer_preloaded  # noqa: E402


def fault_checksum(rounds, items):
    """What fault_tbb / fault_omp print as checksum=C (see fault_tbb.cpp)."""
    return sum(((r * items + i) * 2654435761) % 1000003 for r in range(rounds) for i in range(items))


# Fault modes per fault program. fault_tbb's fork_exit and exit_worker are left out: oneTBB
# itself crashes in them without the shim (see fault_tbb.cpp).
TBB_MODES = ["none", "fork_uexit", "fork_exec", "exit_main"]
OMP_MODES = ["none", "fork_uexit", "fork_exit", "fork_exec", "task_fork_uexit", "task_fork_exit",
             "task_fork_exec", "exit_worker", "exit_main"]
CHILD_LINE = {"ftbb": "fault_tbb mode=child checksum=%d", "fomp": "fault_omp mode=child checksum=%d",
              "fgomp": "fault_omp mode=child checksum=%d"}


def kinds_available(build):
    """Job kinds: name -> make(rng, P) giving (argv, mode, check(stdout) -> bool)."""
    wl = os.path.join(build, "bench", "workloads")
    fault = os.path.join(build, "tests", "fault")
    gat_job = os.path.join(build, "tests", "programs", "gat_job")
    kinds = {"gat": lambda rng, P: ([gat_job, str(rng.randint(1, P)), str(rng.randint(20, 400))], None,
                                    lambda out: True)}

    def workload(path):
        return lambda rng, P: ([path, str(rng.randint(22, 27))], None, lambda out: "checksum" in out)

    for key, name in (("tbb", "wl_fib_tbb"), ("omp", "wl_fib_omp_clang"), ("gomp", "wl_fib_omp_gcc")):
        path = os.path.join(wl, name)
        if os.path.exists(path):
            kinds[key] = workload(path)

    # GCC 12's ASan allocator is not fork-safe: a child forked while another thread of the parent
    # holds an allocator lock deadlocks at its first malloc (seen in malloc from libomp's own atfork
    # child handler, without the shim too once KMP_BLOCKTIME=1 as the shim sets it;
    # tests/README-sanitizers.md). Under ASan no fault program forks.
    def fault_program(key, path, prog, modes):
        if sanitizer_preloaded("asan"):
            modes = [m for m in modes if "fork" not in m]

        def make(rng, P):
            mode = rng.choice(modes)
            rounds, items, item_us = rng.randint(2, 6), rng.randint(16, 96), rng.randint(100, 500)
            line = f"{prog} mode={mode} checksum={fault_checksum(rounds, items)}"
            forks = "fork_" in mode
            if forks:
                line += " child=ok"
            child = CHILD_LINE[key] % fault_checksum(4, 40)  # what the exec'd child prints (child 4 40 1000)

            def check(out):
                lines = out.splitlines()
                children = lines.count(child)
                return line in lines and children == (1 if mode.endswith("fork_exec") else 0) and \
                    len(lines) == 1 + children
            return [path, mode, str(rounds), str(items), str(item_us)], mode, check
        return make

    for key, name, prog, modes in (("ftbb", "fault_tbb", "fault_tbb", TBB_MODES),
                                   ("fomp", "fault_omp_clang", "fault_omp", OMP_MODES),
                                   ("fgomp", "fault_omp_gcc", "fault_omp", OMP_MODES)):
        path = os.path.join(fault, name)
        if os.path.exists(path):
            kinds[key] = fault_program(key, path, prog, modes)
    return kinds


def proc_state(pid):
    """(state letter, start time) of pid from /proc, or None when there is no such process."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2:].split()
    return fields[0], int(fields[19])


def stacks(pid):
    """Every thread's stack of a hung process (gdb, when installed), so a hang in CI says where."""
    try:
        with open(f"/proc/{pid}/cmdline") as f:
            cmd = " ".join(f.read().split("\0"))
        r = subprocess.run(["gdb", "-batch", "-p", str(pid), "-ex", "thread apply all bt 20"],
                           capture_output=True, text=True, timeout=30)
        frames = [l for l in r.stdout.splitlines() if l.startswith(("#", "Thread"))]
        return f"    cmdline: {cmd}\n" + "\n".join("    " + l for l in frames[:80])
    except (OSError, subprocess.SubprocessError) as e:
        return f"    (no stacks: {e})"


def forget_libomp_registration(pid):
    """libomp 14 registers each process in /dev/shm/__KMP_REGISTERED_LIB_<pid>_<uid> and dies of
    SIGBUS at start-up when it finds that file empty, which is what a libomp process SIGKILLed
    between creating and sizing it leaves (checked without the shim: an empty file for the
    pid, then exec a libomp program -> SIGBUS). With thousands of kills pids come round again, so
    like a job manager we remove the empty file of a process we reaped; a live process's file is
    never empty but for that instant."""
    path = f"/dev/shm/__KMP_REGISTERED_LIB_{pid}_{os.getuid()}"
    try:
        if os.path.getsize(path) == 0:
            os.unlink(path)
    except OSError:
        pass


def status_with_heartbeats(shim, env):
    """`apshim status --json` (it has each row's heartbeat age) as
    {"P": P, "jobs": [{"pid", "desire", "allotment", "updated"}]}, where "updated" is a
    time.monotonic() no later than the row's last update; None when there is no table, or when
    no read got the table's lock (Shim.status reads again). `status` waits 100 ms for the lock,
    then reads the rows anyway ("consistent": false), possibly mid-update: a loaded machine (a job
    at nice 19 preempted while it holds the lock, TSan's slowdown) gave a false "holds no
    processor" from a row read between a join and its DP run. {"stopped_holder": True} when a
    stopped job held the lock (one stopped inside an update: nothing can be checked then)."""
    s, before = shim.status_dated(env)
    if s is not None and not s["consistent"] and (s.get("lock_holder") or {}).get("stopped"):
        return {"stopped_holder": True}
    if s is None or not s["consistent"]:
        return None
    jobs = [{"pid": j["pid"], "desire": j["desire"], "allotment": j["allotment"], "away": j["limited_by"] == "away",
             "updated": before - (j["heartbeat_ms"] + 1) / 1000} for j in s["jobs"]]
    return {"P": s["P"], "jobs": jobs}


def children_of_self():
    me = os.getpid()
    try:
        with open(f"/proc/{me}/task/{me}/children") as f:
            return {int(x) for x in f.read().split()}
    except OSError:
        return set()


def fair_efficient_conservative(jobs, P):
    if not jobs:
        return True, ""
    allot = [j["allotment"] for j in jobs]
    desire = [j["desire"] for j in jobs]
    if min(allot) < 1:
        return False, "a job holds no processor"
    if len(jobs) <= P and sum(allot) > P:
        return False, f"sum {sum(allot)} > P {P}"
    deprived = [a for a, d in zip(allot, desire) if a < d]
    if any(a > d for a, d in zip(allot, desire)):
        return False, "not conservative"
    if deprived and max(allot) > min(deprived) + 1:
        return False, "not fair"
    if deprived and sum(allot) < min(P, sum(desire)) and len(jobs) <= P:
        return False, "not efficient"
    return True, ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--P", type=int, default=4)
    ap.add_argument("--max-jobs", type=int, default=10)
    ap.add_argument("--kinds", default="gat,tbb,omp,gomp,ftbb,fomp,fgomp")
    ap.add_argument("--results", default=None, help="append a markdown row of counts to this file")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    shim = Shim(args.build)
    env = shim.env(P=args.P, est_cycle_ms=5)
    if sanitizer_preloaded("asan"):
        # LeakSanitizer checks at exit from a tracer task that dies of its PDEATHSIG (SIGKILL)
        # when the job it checks is killed meanwhile; we reap it as an orphan with exit -9, a
        # "wrong" exit that is no job's. Jobs here are killed at random instants: no leak check.
        env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
    available = kinds_available(args.build)
    kinds = [k for k in args.kinds.split(",") if k in available]
    missing = [k for k in args.kinds.split(",") if k not in available]
    if missing:
        print(f"campaign: kinds {missing} not built; running {kinds}")
    # Children orphaned by a killed fault program become ours: reaped and checked below.
    PR_SET_CHILD_SUBREAPER = 36
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    cycle_s = 0.005
    running = {}     # pid -> (Popen, kind, mode, check, deadline)
    started_st = {}  # pid -> /proc start time of a job we started (tells a reused pid apart)
    dead_at = {}     # pid -> time of death (killed or exited; for others' processes, first seen dead)
    orphans = {}     # pid -> time first seen as our orphaned grandchild
    killed = []      # Popen of killed jobs whose pipes stay open for their orphans
    stopped = {}     # pid -> when it is continued (SIGCONT)
    counts = dict(steps=0, started=0, sigkill=0, sigterm=0, stops=0, checks_in_stopped_lock=0, finished=0, program_faults=0, children_rows=0,
                  orphans=0, exits_at_allotment_1=0, violations=0, wrong=0, hangs=0)
    last_allot = {}  # pid -> allotment at the last check that saw its row
    orphan_kinds = {}  # program and mode of orphans -> count
    by_mode = {}     # "kind:mode" -> fault programs that ran their fault to the end (not killed)
    notes = []

    def reap():
        now = time.monotonic()
        for pid, (p, kind, mode, check_out, deadline) in list(running.items()):
            if p.poll() is not None:
                out = p.stdout.read() if p.stdout else ""
                if p.returncode != 0 or not check_out(out):
                    counts["wrong"] += 1
                    notes.append(f"{kind} {mode or ''} pid {pid} exit {p.returncode}: {out.strip()[:160]!r} "
                                 f"{p.stderr.read().strip()[:160]!r}")
                elif mode and mode != "none":
                    counts["program_faults"] += 1
                    if mode.startswith("exit_") and last_allot.get(pid) == 1:
                        counts["exits_at_allotment_1"] += 1
                    by_mode[f"{kind}:{mode}"] = by_mode.get(f"{kind}:{mode}", 0) + 1
                counts["finished"] += 1
                stopped.pop(pid, None)  # stopped after it had exited: nothing to continue
                dead_at[pid] = now
                forget_libomp_registration(pid)
                del running[pid]
            elif now > deadline:
                counts["hangs"] += 1
                notes.append(f"{kind} {mode or ''} pid {pid} still running past its deadline\n{stacks(pid)}")
                p.kill()
                p.wait()
                stopped.pop(pid, None)
                dead_at[pid] = now
                forget_libomp_registration(pid)
                del running[pid]
        # Grandchildren whose parent was killed (we are their subreaper).
        for pid in children_of_self() - set(running) - set(orphans):
            orphans[pid] = now
            counts["orphans"] += 1
            try:
                with open(f"/proc/{pid}/cmdline") as f:
                    name = " ".join(os.path.basename(a) for a in f.read().split("\0")[:2])
                if not name:  # already a zombie, or between fork and exec
                    with open(f"/proc/{pid}/comm") as f:
                        name = f.read().strip()
            except OSError:
                name = "?"
            orphan_kinds[name] = orphan_kinds.get(name, 0) + 1
        for pid, since in list(orphans.items()):
            try:
                done, status = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done, status = pid, 0
            if done == pid:
                code = os.waitstatus_to_exitcode(status)
                if code != 0:
                    counts["wrong"] += 1
                    notes.append(f"orphaned child {pid} exit {code}")
                dead_at.setdefault(pid, now)
                forget_libomp_registration(pid)
                del orphans[pid]
            elif now - since > 60:
                counts["hangs"] += 1
                notes.append(f"orphaned child {pid} still running after 60 s\n{stacks(pid)}")
                os.kill(pid, signal.SIGKILL)
        # A killed job's stdout stays open while its orphans may still write to it (else they
        # would die of SIGPIPE); their output is not checked, their exit status is.
        if not orphans:
            for p in killed:
                p.stdout.close()
                p.stderr.close()
            killed.clear()

    def resume(due_before):
        for pid, until in list(stopped.items()):
            if until <= due_before:
                try:
                    os.kill(pid, signal.SIGCONT)
                except ProcessLookupError:  # it had exited (unreaped) when it was stopped, and is reaped
                    pass
                del stopped[pid]

    def check():
        s = status_with_heartbeats(shim, env)
        if s is None:
            return
        if s.get("stopped_holder"):
            counts["checks_in_stopped_lock"] += 1
            return
        jobs = s["jobs"]
        # DP shares the processors among the jobs that are not away; a job gone away since the
        # last DP run still holds its processors until the next (any live job's update).
        pending = any(j["away"] and j["allotment"] > 0 for j in jobs)
        ok, why = (True, "") if pending else fair_efficient_conservative([j for j in jobs if not j["away"]], s["P"])
        now = time.monotonic()
        rows = {j["pid"] for j in jobs}
        if not ok:
            counts["violations"] += 1
            notes.append(f"step {counts['steps']}: {why}: {[(j['desire'], j['allotment']) for j in jobs]}")
        for j in jobs:
            last_allot[j["pid"]] = j["allotment"]
        for pid in rows:
            if pid not in row_seen_at:
                row_seen_at[pid] = now
                if pid not in started_st:
                    counts["children_rows"] += 1
            # A row of a process we did not start (a fault program's child): dead from the first
            # check that finds it gone or a zombie.
            if pid not in running and pid not in dead_at:
                st = proc_state(pid)
                if st is None or st[0] in "ZX":
                    dead_at[pid] = now
                    forget_libomp_registration(pid)
        # A dead row must be gone once a live job (one of ours, so no reused pid) has updated
        # more than two est_cycles after the death (its row silent for one, then the next scan).
        updated = [j["updated"] for j in jobs if j["pid"] in running]
        if updated:
            latest = max(updated)
            stale, reused = [], []
            for pid, t in dead_at.items():
                if pid in rows and latest > t + 2 * cycle_s + 0.001:
                    st = proc_state(pid)
                    if st is not None and st[0] not in "ZX":
                        reused.append(pid)  # the pid now belongs to a process we did not start
                    else:
                        stale.append(pid)
            for pid in reused:
                del dead_at[pid]
            if stale:
                counts["violations"] += 1
                notes.append(f"step {counts['steps']}: rows of dead pids {stale} survive an update "
                             f"{(latest - min(dead_at[p] for p in stale)) * 1000:.0f} ms after the death")
        # No lost rows: a stand-in job (gat_job DESIRE MS) keeps its row from its join until it
        # leaves, which is at least MS after it started; a row seen and gone before then was lost.
        # (Whether a job joins at all shows in its exit status.)
        for pid, (p, kind, _, _, _) in running.items():
            if kind == "gat" and pid in row_seen_at and pid not in rows and now < started_at[pid] + gat_ms[pid]:
                counts["violations"] += 1
                notes.append(f"step {counts['steps']}: live job {pid} lost its row")

    started_at = {}
    gat_ms = {}      # pid -> how long a stand-in job runs, s
    row_seen_at = {}
    for step in range(args.steps):
        counts["steps"] += 1
        action = rng.random()
        if action < 0.45 and len(running) < args.max_jobs:
            kind = rng.choice(kinds)
            argv, mode, check_out = available[kind](rng, args.P)
            p = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            running[p.pid] = (p, kind, mode, check_out, time.monotonic() + 60)
            # a new process with a pid we saw before: forget the old one
            dead_at.pop(p.pid, None)
            row_seen_at.pop(p.pid, None)
            last_allot.pop(p.pid, None)
            st = proc_state(p.pid)
            started_st[p.pid] = st[1] if st else 0
            started_at[p.pid] = time.monotonic()
            if kind == "gat":
                gat_ms[p.pid] = int(argv[2]) / 1000
            counts["started"] += 1
        elif action < 0.65 and running:
            pid = rng.choice(list(running))
            sig = signal.SIGKILL if rng.random() < 0.7 else signal.SIGTERM
            p = running.pop(pid)[0]
            p.send_signal(sig)
            if stopped.pop(pid, None) is not None:
                p.send_signal(signal.SIGCONT)  # a stopped process takes SIGTERM only once continued
            p.wait()
            killed.append(p)
            dead_at[pid] = time.monotonic()
            forget_libomp_registration(pid)
            counts["sigkill" if sig == signal.SIGKILL else "sigterm"] += 1
        elif action < 0.70 and set(running) - set(stopped):
            # Stopped for up to 1.5 s (past the table's 1 s, after which it holds no processor);
            # its 60 s to finish wait meanwhile.
            pid = rng.choice(sorted(set(running) - set(stopped)))
            pause = rng.uniform(0.05, 1.5)
            os.kill(pid, signal.SIGSTOP)
            stopped[pid] = time.monotonic() + pause
            p, kind, mode, check_out, deadline = running[pid]
            running[pid] = (p, kind, mode, check_out, deadline + pause)
            counts["stops"] += 1
        time.sleep(rng.uniform(0, 0.03))
        resume(time.monotonic())
        reap()
        check()
    resume(float("inf"))
    deadline = time.monotonic() + 60
    while (running or orphans) and time.monotonic() < deadline:
        time.sleep(0.02)
        reap()
        check()
    for pid, (p, kind, mode, _, _) in running.items():
        counts["hangs"] += 1
        notes.append(f"{kind} {mode or ''} pid {pid} did not finish\n{stacks(pid)}")
        p.kill()
    for pid in orphans:
        counts["hangs"] += 1
        notes.append(f"orphaned child {pid} did not finish\n{stacks(pid)}")
        os.kill(pid, signal.SIGKILL)
    faults = counts["sigkill"] + counts["sigterm"] + counts["stops"] + counts["program_faults"]
    line = (f"| {time.strftime('%Y-%m-%d')} | seed {args.seed}, P={args.P}, kinds {','.join(kinds)} | {counts['steps']} | "
            f"{counts['started']} | {faults} ({counts['sigkill'] + counts['sigterm']} signals, {counts['stops']} stops, "
            f"{counts['program_faults']} in-program) | {counts['violations']} | {counts['wrong']} | {counts['hangs']} |")
    print(counts)
    print("in-program faults run to the end:", dict(sorted(by_mode.items())))
    print("orphans reaped:", dict(sorted(orphan_kinds.items())))
    for n in notes[:20]:
        print("  " + n)
    if args.results:
        with open(args.results, "a") as f:
            f.write(line + "\n")
    bad = counts["violations"] + counts["wrong"] + counts["hangs"]
    print(f"campaign: {0 if bad else 1} passed, {1 if bad else 0} failed")
    if bad:
        keep_files()
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
