"""`apshim status/top/gc/run` against a table populated by real processes (gat_job)."""
import json
import os
import signal
import subprocess
import sys

from apshim_test import Check, Shim, job_of, wait_for

build, gat_job = sys.argv[1], sys.argv[2]
shim = Shim(build)
check = Check("cli")
env = shim.env(P=8, preload=False)

r = subprocess.run([shim.cli, "status", "--json"], env=env, capture_output=True, text=True)
check.expect(r.returncode == 1 and "cannot open" in r.stderr, "status without a table: exit 1 and a reason")

jobs = [subprocess.Popen([gat_job, str(d), "20000"], env=env, stdout=subprocess.PIPE, text=True) for d in (2, 8, 8)]
try:
    def settled():
        s = shim.status(env)
        if not s or len(s["jobs"]) != 3:
            return None
        return s if sorted(j["allotment"] for j in s["jobs"]) == [2, 3, 3] else None

    s = wait_for(settled, 10)
    check.expect(s is not None, "three jobs with desires 2, 8, 8 on P=8 settle at allotments 2, 3, 3")
    s = shim.status(env)
    check.expect(set(s.keys()) == {"P", "est_cycle_ms", "jobs"} and s["P"] == 8 and s["est_cycle_ms"] == 5,
                 "status JSON has P, est_cycle_ms, jobs")
    keys = {"pid": int, "name": str, "desire": int, "allotment": int, "usage": int, "eta": float}
    check.expect(all(set(j.keys()) == set(keys) and all(isinstance(j[k], t) for k, t in keys.items()) for j in s["jobs"]),
                 "every job row has pid, name, desire, allotment, usage, eta with the right types")
    check.expect(sorted(j["pid"] for j in s["jobs"]) == sorted(p.pid for p in jobs), "rows are the three processes")
    check.expect(all(j["name"] == "gat_job" for j in s["jobs"]), "name is the process name")

    text = subprocess.run([shim.cli, "status"], env=env, capture_output=True, text=True).stdout
    check.expect("P=8" in text and text.count("gat_job") == 3, "plain status prints the table")
    top = subprocess.run([shim.cli, "top", "--count", "2", "--interval", "0.1"], env=env, capture_output=True,
                         text=True, timeout=10)
    check.expect(top.returncode == 0 and top.stdout.count("ALLOTMENT") == 2, "top --count 2 refreshes twice")

    # SIGKILL one job: another job's next update reclaims the row and DP hands out its share.
    victim = jobs[1]
    victim.send_signal(signal.SIGKILL)
    victim.wait()

    def rebalanced():
        s = shim.status(env)
        return s if s and len(s["jobs"]) == 2 and sorted(j["allotment"] for j in s["jobs"]) == [2, 6] else None

    check.expect(wait_for(rebalanced, 5) is not None, "a killed job's processors go to the survivors (2, 6)")
finally:
    for p in jobs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            p.wait(timeout=10)

# gc on a table holding dead rows nobody else will reclaim (the SIGTERMed jobs above, this one).
p = subprocess.Popen([gat_job, "4", "20000"], env=env, stdout=subprocess.PIPE, text=True)
check.expect(wait_for(lambda: job_of(shim.status(env), p.pid), 5) is not None, "a new job joins")
p.send_signal(signal.SIGKILL)
p.wait()
gc = subprocess.run([shim.cli, "gc"], env=env, capture_output=True, text=True)
check.expect(gc.returncode == 0 and "reclaimed 1 dead row" in gc.stdout, "gc reclaims the dead row: " + gc.stdout.strip())
check.expect(shim.status(env)["jobs"] == [], "table empty after gc")

# run: bad values are refused before anything runs; good ones reach the program's environment.
bad = subprocess.run([shim.cli, "run", "--eta", "2", "--", "true"], capture_output=True, text=True)
check.expect(bad.returncode == 2 and "--eta" in bad.stderr, "run --eta 2 is refused with a reason")
good = subprocess.run([shim.cli, "run", "--eta", "0.7", "--P", "4", "--", "sh", "-c", 'echo "$APSHIM_ETA $APSHIM_P $LD_PRELOAD"'],
                      capture_output=True, text=True, env={k: v for k, v in os.environ.items() if k != "LD_PRELOAD"})
out = good.stdout.split()
check.expect(good.returncode == 0 and out[:2] == ["0.7", "4"] and out[2].endswith("libapshim.so"),
             "run sets the options and LD_PRELOAD")
opts = subprocess.run([shim.cli, "options"], capture_output=True, text=True)
check.expect("APSHIM_ETA" in opts.stdout and "APSHIM_DISABLE" in opts.stdout, "options lists the variables")
check.done()
