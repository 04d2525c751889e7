"""A job stopped (SIGSTOP, Ctrl-Z, a debugger) while it holds the table's lock, in the microseconds
of an update, holds it until it is resumed: the lock is a robust mutex, which repairs a dead
holder but can only wait for a stopped one, so meanwhile no job's update gets through and every
job keeps its allotment. That is a known limit; what the user needs then is to be told who holds
the lock (gat/table.hpp: LockHolder). Seen in CI's TSan stage, where updates take longer
(shim.stopped_corunner tries its stop again then).

A real OpenMP program (tests/omp/omp_work, short static-loop regions) runs under the shim while a
stand-in job (gat_fill --stop-holding-lock) joins its table, takes the lock and stops itself in
it. Checked: `apshim status --json` names the holder (its pid, name, stopped) and plain `apshim
status` says so; `apshim gc` names it in its refusal; the program's shim says once, after its
second without an update, which pid holds the lock and that it is stopped; resumed, everything
goes on and the program's answer is the native one."""
import re
import signal
import subprocess
import sys
import time

from apshim_test import Check, Shim, wait_for

build, prog, gat_fill = sys.argv[1], sys.argv[2], sys.argv[3]
shim = Shim(build)
check = Check("shim.stopped_lock_holder")
args = [prog, "static", "1100", "100"]  # 1100 regions of 64 items of 100 us: 3.5-7 s
native = shim.run(args, shim.env(preload=False), timeout=120)


def checksum(out):
    m = re.search(r"checksum=(\d+)", out or "")
    return m.group(1) if m else None


check.expect(native.returncode == 0, f"runs natively ({native.returncode}: {native.stdout.strip()})")
env = shim.env(P=2)
job = shim.spawn(args, env)
joined = wait_for(lambda: any(j["pid"] == job.pid for j in (shim.status(env) or {"jobs": []})["jobs"]), 10)
check.expect(joined, "the program joins the table")
fill = subprocess.Popen([gat_fill, "1", "--stop-holding-lock"], env=shim.env(P=2, preload=False),
                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
ready = fill.stdout.readline().split()
check.expect(ready[:2] == ["ready", "1"], f"the stand-in joined and took the lock ({ready})")
stopped_at = time.monotonic()
holder = {}


def stopped_holder():
    global holder
    holder = (shim.status(env) or {}).get("lock_holder") or {}
    return holder.get("stopped") is True


check.expect(wait_for(stopped_holder, 5), f"status --json: the lock's holder, stopped ({holder})")
pid = holder.get("pid", -1)
check.expect(holder.get("name") == "gat_fill" and pid > 0 and pid not in (fill.pid, job.pid),
             f"... named: the stand-in's child, gat_fill ({holder}; gat_fill {fill.pid}, program {job.pid})")
text = subprocess.run([shim.cli, "status"], env=env, capture_output=True, text=True, timeout=10)
check.expect(f"held for over 100 ms by pid {pid} (gat_fill), which is stopped:" in text.stdout and "no job's allotment changes" in text.stdout,
             f"plain status says who holds the lock and that it is stopped ({text.stdout.splitlines()[:2]})")
gc = subprocess.run([shim.cli, "gc"], env=env, capture_output=True, text=True, timeout=10)
check.expect(gc.returncode == 1 and f"held by pid {pid} (gat_fill), which is stopped" in gc.stderr,
             f"gc refuses, naming the holder (rc {gc.returncode}: {gc.stderr.strip()})")
time.sleep(max(0.0, stopped_at + 1.8 - time.monotonic()))  # past the program's 200 cycles without an update
still_running = job.poll() is None
if pid > 0:
    subprocess.run(["kill", "-CONT", str(pid)])
fill.stdin.close()
fill.wait(timeout=30)
out, err = job.communicate(timeout=120)
if still_running:
    check.expect(f"its lock is held by pid {pid} (gat_fill), which is stopped; keeping allotment" in err and
                 err.count("no update for") == 1,
                 f"the program's shim said once who holds the lock ({[l for l in err.splitlines() if 'apshim' in l]})")
else:
    print("INCONCLUSIVE: the program ended before its shim went 200 cycles without an update", flush=True)
check.expect(job.returncode == 0 and checksum(out) is not None and checksum(out) == checksum(native.stdout),
             f"the native answer ({job.returncode}: {out.strip()} against {native.stdout.strip()})")
check.expect(shim.status(env).get("lock_holder") is None, "resumed, the lock is free again")
check.done()
