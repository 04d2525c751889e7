"""A job stopped (SIGSTOP, Ctrl-Z, a debugger) while it holds the table's lock, in the microseconds
of an update, holds it until it is resumed: the lock is a robust mutex, which repairs a dead
holder but can only wait for a stopped one, so meanwhile no job's update gets through and every
job keeps its allotment. That is a known limit. What the shim does about it: it names the holder
(gat/table.hpp: LockHolder), and once a second without an update each running job uses a stopped
holder's processors as it uses the ones no job holds (APSHIM_USE_IDLE), since they sit idle. Seen
in CI's TSan stage, where updates take longer (shim.stopped_corunner tries its stop again then).

A real OpenMP program (tests/omp/omp_work, short static-loop regions; its confinement, width and
idle checks off, so that it is confined to exactly its allotment's CPU) runs under the shim in a
P = 2 table. A stand-in job (gat_fill --stop-holding-lock) joins it, so that the program has
allotment 1, then takes the lock and stops itself in it. Checked: the program's threads were
confined to one CPU; `apshim status --json` names the holder (its pid, name, stopped) and plain
`apshim status` says so; `apshim gc` names it in its refusal; after the program's second without
an update its threads run on both CPUs (the stopped holder's too) and it uses more than one CPU
(when the machine lets it: INCONCLUSIVE otherwise), and its shim says once who holds the lock;
a second program started while the holder is stopped runs unthrottled and says why once; resumed,
the table answers again, the second program joins it, and both programs' answers are the native
one."""
import subprocess
import sys
import time

from apshim_test import Check, Shim, beside_stopping_holder, checksum, cpus_used_over, program_cpu_masks, require_two_cpus, wait_for

require_two_cpus("a second CPU for the program to be confined away from, and to take back")
build, prog, gat_fill = sys.argv[1], sys.argv[2], sys.argv[3]
shim = Shim(build)
check = Check("shim.stopped_lock_holder")
args = [prog, "static", "1500", "100"]  # 1500 regions of 64 items of 100 us: 5-10 s
native = shim.native(args, timeout=120)


def one_cpu(ms):
    return bool(ms) and all("-" not in m and "," not in m for m in ms)


check.expect(native.returncode == 0, f"runs natively ({native.returncode}: {native.stdout.strip()})")
env = shim.env(P=2, APSHIM_CONFINE_CHECK=0, APSHIM_WIDTH_CHECK=0, APSHIM_IDLE_CHECK=0)
job, fill, ready = beside_stopping_holder(shim, check, args, env, gat_fill)
check.expect(ready[:2] == ["ready", "1"], f"the stand-in joined and took the lock ({ready})")
stopped_at = time.monotonic()
before = program_cpu_masks(job.pid)
holder = {}


def stopped_holder():
    global holder
    holder = (shim.status(env) or {}).get("lock_holder") or {}
    return holder.get("stopped") is True and holder.get("stuck") is True


check.expect(wait_for(stopped_holder, 5), f"status --json: the lock's holder, stopped ({holder})")
pid = holder.get("pid", -1)
check.expect(holder.get("name") == "gat_fill" and pid > 0 and pid not in (fill.pid, job.pid),
             f"... named: the stand-in's child, gat_fill ({holder}; gat_fill {fill.pid}, program {job.pid})")
check.expect(one_cpu(before), f"beside the stand-in the program was confined to one CPU ({before})")
text = subprocess.run([shim.cli, "status"], env=env, capture_output=True, text=True, timeout=10)
check.expect(f"held for over 100 ms by pid {pid} (gat_fill), which is stopped:" in text.stdout and
             "no job's allotment changes" in text.stdout,
             f"plain status says who holds the lock and that it is stopped ({text.stdout.splitlines()[:2]})")
gc = subprocess.run([shim.cli, "gc"], env=env, capture_output=True, text=True, timeout=10)
check.expect(gc.returncode == 1 and f"held by pid {pid} (gat_fill), which is stopped" in gc.stderr,
             f"gc refuses, naming the holder (rc {gc.returncode}: {gc.stderr.strip()})")
widened = wait_for(lambda: not one_cpu(program_cpu_masks(job.pid)) or job.poll() is not None, 5)
still_running = job.poll() is None
if still_running:
    after = program_cpu_masks(job.pid)
    check.expect(widened and after and all("-" in m or "," in m for m in after),
                 f"a second without an update: the program's threads run on both CPUs, the stopped holder's too ({after})")
    used, capacity = cpus_used_over(job.pid)
    if job.poll() is not None or capacity < 1.5:
        print(f"INCONCLUSIVE: the machine left the program {capacity:.2f} CPUs (used {used:.2f})", flush=True)
    else:
        check.expect(used > 1.3, f"it uses the second CPU: {used:.2f} CPUs over 0.5 s")
# A second program started now cannot join (join waits 1 s for the lock): it runs unthrottled,
# says so, and keeps trying for as long as the holder is stopped.
late = shim.spawn(args, env)
time.sleep(1.5)
if pid > 0:
    subprocess.run(["kill", "-CONT", str(pid)])


def answering():
    global rows
    s = shim.status(env) or {}
    rows = {j["pid"]: (j["allotment"], j["limited_by"]) for j in s.get("jobs", [])}
    return (s.get("lock_holder") is None and rows.get(pid, (0, ""))[1] == "away" and
            rows.get(job.pid, (0, ""))[0] + rows.get(late.pid, (0, ""))[0] == 2 and late.pid in rows)


# The stand-in never updates after its join (gat_fill), so that by now it is away (silent for 1 s).
rows = {}
if job.poll() is None and late.poll() is None:
    check.expect(wait_for(lambda: answering() or job.poll() is not None or late.poll() is not None, 5),
                 f"resumed: the table answers again, the second program joins it (the silent stand-in away, the "
                 f"programs a processor each: {rows})")
fill.stdin.close()
fill.wait(timeout=30)
out, err = job.communicate(timeout=120)
late_out, late_err = late.communicate(timeout=120)
check.expect(late_err.count(f"its lock is held by pid {pid} (gat_fill), which is stopped; running unthrottled until that "
                            "job runs again") == 1,
             f"the second program's shim said once that it could not join, and why "
             f"({[line for line in late_err.splitlines() if 'apshim' in line]})")
check.expect(late.returncode == 0 and checksum(late_out) == checksum(native.stdout),
             f"the second program's answer is the native one too ({late.returncode}: {late_out.strip()})")
said = [line for line in err.splitlines() if "apshim" in line]
if still_running:
    check.expect(f"its lock is held by pid {pid} (gat_fill), which is stopped; keeping allotment 1 meanwhile, "
                 "and running on the stuck holder's processors too" in err and err.count("no update for") == 1,
                 f"the program's shim said once who holds the lock, and what it does ({said})")
else:
    print("INCONCLUSIVE: the program ended before its shim went a second without an update", flush=True)
check.expect(job.returncode == 0 and checksum(out) is not None and checksum(out) == checksum(native.stdout),
             f"the native answer ({job.returncode}: {out.strip()} against {native.stdout.strip()})")
check.expect(shim.status(env).get("lock_holder") is None, "resumed, the lock is free again")
check.done()
