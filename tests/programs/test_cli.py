"""`apshim status/top/gc/run` against a table populated by real processes (gat_job)."""
import json
import os
import shutil
import signal
import subprocess
import sys

from apshim_test import Check, Shim, job_of, wait_for

build, gat_job = sys.argv[1], sys.argv[2]
shim = Shim(build)
check = Check("cli")
env = shim.env(P=8, preload=False)

# Before any job created the table: an empty table with the P and est_cycle a job would create
# it with, and nothing created by looking.
r = subprocess.run([shim.cli, "status", "--json"], env=env, capture_output=True, text=True)
check.expect(r.returncode == 0 and json.loads(r.stdout) == {"P": 8, "est_cycle_ms": 5, "fair_share": 8.0, "consistent": True, "lock_holder": None,
                                                        "jobs": []},
             f"status --json without a table: P, est_cycle_ms and no jobs (rc {r.returncode}, {r.stdout!r} {r.stderr!r})")
r = subprocess.run([shim.cli, "status"], env=env, capture_output=True, text=True)
check.expect(r.returncode == 0 and "P=8" in r.stdout and "jobs=0" in r.stdout and "not created yet" in r.stdout,
             f"plain status without a table says so: {r.stdout.strip()!r}")
r = subprocess.run([shim.cli, "top", "--count", "1"], env=env, capture_output=True, text=True, timeout=10)
check.expect(r.returncode == 0 and "ALLOTMENT" in r.stdout, "top without a table shows the empty table")
check.expect(not os.path.exists(env["APSHIM_GAT"]), "looking did not create the table")

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
    check.expect(set(s.keys()) == {"P", "est_cycle_ms", "fair_share", "consistent", "lock_holder", "jobs"} and s["P"] == 8
                 and s["est_cycle_ms"] == 5 and s["consistent"] is True and s["lock_holder"] is None,
                 "status JSON has P, est_cycle_ms, fair_share, consistent (true: read under the lock), lock_holder "
                 "(null: nobody held it too long), jobs")
    keys = {"pid": int, "name": str, "desire": int, "allotment": int, "usage": int, "eta": float, "runtimes": list,
            "processors": list, "threads_running": int, "limited_by": str, "heartbeat_ms": float}
    check.expect(all(set(j.keys()) == set(keys) and all(isinstance(j[k], t) for k, t in keys.items()) for j in s["jobs"]),
                 "every job row has pid, name, desire, allotment, usage, eta, runtimes, processors, threads_running, limited_by with the right types")
    check.expect(all(len(j["processors"]) == j["allotment"] and j["limited_by"] == ("desire" if j["allotment"] >= j["desire"] else "share")
                     for j in s["jobs"]), "each job runs on as many processors as its allotment, and says what limits it")
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

# A job whose name (comm) holds bytes >= 0x80 and a control byte: --json stays valid JSON,
# well-formed UTF-8 kept as is, the other bytes as \u00XX.
odd = os.path.join(shim.tmp.encode(), b"job\xff\xc3\xa9\x01x")
shutil.copy(gat_job, odd)
p = subprocess.Popen([odd, "4", "20000"], env=env, stdout=subprocess.PIPE)
try:
    check.expect(wait_for(lambda: job_of(shim.status(env), p.pid), 5) is not None, "a job with an odd name joins")
    raw = subprocess.run([shim.cli, "status", "--json"], env=env, capture_output=True, timeout=10).stdout
    try:
        parsed = json.loads(raw.decode("utf-8"))
    except ValueError as e:  # UnicodeDecodeError included
        parsed = None
        check.expect(False, f"status --json is valid UTF-8 JSON with that name: {e}: {raw!r}")
    if parsed is not None:
        name = job_of(parsed, p.pid)["name"]
        check.expect(name == "job\u00ff\u00e9\u0001x", f"the name reads back as job, \\u00ff, e-acute, \\u0001, x: {name!r}")
    text = subprocess.run([shim.cli, "status"], env=env, capture_output=True, timeout=10).stdout
    check.expect(b"job\\xff\xc3\xa9\\x01x" in text, f"plain status shows it without raw control or stray bytes: {text!r}")
finally:
    p.terminate()
    p.wait(timeout=10)


def cli(*args, extra_env=None, timeout=5):
    """Runs the CLI; a command that does not return within `timeout` counts as exit status None."""
    try:
        return subprocess.run([shim.cli, *args], env={**env, **(extra_env or {})}, capture_output=True, text=True,
                              errors="replace", timeout=timeout)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(args, None, "", "(timed out)")


# top: numbers are checked (atof/atol took "abc" for 0, and top then ran for ever).
for args in (["--interval", "abc"], ["--interval", "-1"], ["--interval", "0"], ["--interval", "nan"],
             ["--interval", "1e999"], ["--interval", "0.5s"], ["--count", "0"], ["--count", "-3"],
             ["--count", "1.5"], ["--count", "x"], ["--count", "99999999999999999999"], ["--interval"]):
    r = cli("top", *args)
    flag = args[0]
    check.expect(r.returncode == 2 and flag in r.stderr, f"top {' '.join(args)}: exit 2 naming {flag} (rc {r.returncode}, {r.stderr.strip()!r})")
check.expect(cli("top", "--interval", "0.05", "--count", "1").returncode == 0, "top --interval 0.05 --count 1 is fine")

# --gat gets APSHIM_GAT's checks: absolute, no control characters, at most 200 bytes.
for bad in ("relative/gat", "/tmp/a\nb", "/" + "x" * 300, ""):
    r = cli("--gat", bad, "status")
    check.expect(r.returncode == 2 and "--gat" in r.stderr and r.stderr.count("\n") == 1,
                 f"--gat {bad[:20]!r}: exit 2 with a reason on one line (rc {r.returncode}, {r.stderr.strip()[:120]!r})")
r = cli("--gat")
check.expect(r.returncode == 2, "--gat without a value: exit 2")
r = cli("--gat", env["APSHIM_GAT"], "status", "--json")
check.expect(r.returncode == 0 and json.loads(r.stdout)["P"] == 8, "--gat with a good path works")
r = cli("status", extra_env={"APSHIM_GAT": "relative/gat"})
check.expect("APSHIM_GAT" in r.stderr and "invalid" in r.stderr, f"a bad APSHIM_GAT is reported as in a job: {r.stderr.strip()[:160]!r}")

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
