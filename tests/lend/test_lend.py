"""Lending while quiet (APSHIM_LEND_MS, shim/controller.cpp), in a real program of each runtime:
rounds of a parallel loop, each followed by a 300 ms serial phase.

The table has P = 4 and an est_cycle of 10 s, so the job never runs an estimation cycle during
the test: whatever it writes in its row comes from lending. (A row silent for 1 s is also set to
desire 1 by its co-runners' updates, the table's rule for jobs gone idle: only rows written
less than 1 s ago count here.) Beside a stand-in co-runner that wants all
4 processors (DP gives each 2), the job must publish desire 1 in its serial phases, so that the
co-runner gets 3, and ask its desire of 4 back when its next loop starts; the result is the
same as natively. With APSHIM_LEND_MS=0 the row never changes. Alone, nobody could use what it
would lend, and its controller does not wake to look (voluntary context switches of apshim-ctl).
Usage: test_lend.py BUILD NAME PROGRAM  (PROGRAM: tests/tbb/tbb_rounds or tests/omp/omp_rounds_*)"""
import os
import subprocess
import sys
import time

from apshim_test import Check, CoRunner, Shim, job_of

build, name, prog = sys.argv[1], sys.argv[2], sys.argv[3]
shim = Shim(build)
check = Check(f"lend.{name}")
P = 4
# 4 rounds: 400 items of about 1 ms, then 300 ms of serial work.
args = [prog, "4", "400", "1000", "300"]


def checksum(out):
    return next((w for w in out.split() if w.startswith("checksum=")), None)


def controller_wakeups(pid):
    """Voluntary context switches of the job's apshim-ctl thread so far (None if not found)."""
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                st = f.read()
            if "Name:\tapshim-ctl" in st:
                return next(int(line.split()[1]) for line in st.splitlines() if line.startswith("voluntary_ctxt_switches"))
    except (OSError, StopIteration, ValueError):
        pass
    return None


def watch(env):
    """Runs the job and polls the table until it exits: (result, [(job desire, job allotment,
    co-runner allotment)] for the polls that found the job's row written less than 1 s before,
    the controller's last wake-up count)."""
    p = shim.spawn(args, env)
    seen, wakeups = [], None
    deadline = time.monotonic() + 100
    while p.poll() is None and time.monotonic() < deadline:
        st = shim.status(env)
        job = job_of(st, p.pid)
        others = [j for j in (st or {"jobs": []})["jobs"] if j["pid"] != p.pid]
        if job and job["heartbeat_ms"] < 900:
            seen.append((job["desire"], job["allotment"], others[0]["allotment"] if others else None))
        wakeups = controller_wakeups(p.pid) or wakeups
        time.sleep(0.03)
    if p.poll() is None:
        p.kill()
    out, err = p.communicate()
    return subprocess.CompletedProcess(args, p.returncode, out, err), seen, wakeups


native = shim.native(args, timeout=120)
check.expect(native.returncode == 0 and checksum(native.stdout), f"runs natively ({native.stderr.strip()[-200:]})")

for lend_ms in ("1", "0"):
    env = shim.env(P=P, gat=shim.path(f"lend{lend_ms}.gat"), est_cycle_ms=10000, APSHIM_LEND_MS=lend_ms)
    with CoRunner(shim, env, P):
        r, seen, _ = watch(env)
    check.expect(r.returncode == 0 and checksum(r.stdout) == checksum(native.stdout),
                 f"APSHIM_LEND_MS={lend_ms}: same result as natively ({checksum(r.stdout)}; {r.stderr.strip()[-200:]})")
    desires = [d for d, _, _ in seen]
    if lend_ms == "0":
        check.expect(seen and set(desires) == {P}, f"lending off: the job's desire stays {P} (saw {sorted(set(desires))})")
        continue
    lent = [i for i, (d, a, co) in enumerate(seen) if d == 1 and a == 1 and co == P - 1]
    check.expect(lent, f"quiet, the job lends: desire 1, allotment 1, the co-runner {P - 1} (saw {sorted(set(seen))})")
    back = [i for i, (d, a, co) in enumerate(seen) if d == P and a == P // 2 and lent and i > lent[0]]
    check.expect(back, f"its next loop asks back desire {P} and gets {P // 2} again (saw {seen[lent[0]:][:40] if lent else seen[:40]})")

# Alone: no co-runner wants more, so no polls; the controller sleeps through the whole run (its
# 10 s cycle never comes).
env = shim.env(P=P, gat=shim.path("alone.gat"), est_cycle_ms=10000)
r, seen, wakeups = watch(env)
check.expect(r.returncode == 0 and checksum(r.stdout) == checksum(native.stdout), "alone: same result")
check.expect(wakeups is not None and wakeups < 30,
             f"alone, the controller does not poll for quiet phases (it woke {wakeups} times in the run)")
check.done()
