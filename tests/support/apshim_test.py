"""Helpers for apshim's integration tests: run real programs under the built shim with a
private table, read the table through the `apshim` CLI, read traces, inspect /proc.

Every test gets its own table (never the user's /dev/shm/apshim-<uid>), and every wait is
bounded: a hang fails the test instead of freezing CI.

Sanitizer builds (tests/README-sanitizers.md): a sanitized libapshim.so needs its sanitizer
runtime ahead of everything else in the process, so scripts/test.sh sets TEST_PRELOAD_FIRST
(gcc's libasan.so or libtsan.so; not an APSHIM_* name, which the shim would call unknown).
Shim.preload is then "<runtime> <shim>", the LD_PRELOAD every test should use (Shim.env() does).
"""
import csv
import json
import os
import subprocess
import sys
import tempfile
import time


def sanitizer_preloaded(name):
    """True when scripts/test.sh preloads that sanitizer's runtime ("asan", "tsan") ahead of the shim."""
    return f"lib{name}" in os.path.basename(os.environ.get("TEST_PRELOAD_FIRST", ""))


class Shim:
    def __init__(self, build_dir):
        self.build_dir = os.path.abspath(build_dir)
        self.lib = os.path.join(self.build_dir, "shim", "libapshim.so")
        self.cli = os.path.join(self.build_dir, "tools", "apshim")
        for path in (self.lib, self.cli):
            if not os.path.exists(path):
                raise FileNotFoundError(f"{path} not built")
        self.tmp = tempfile.mkdtemp(prefix="apshim-test-")
        # What LD_PRELOAD must hold to load the shim (a sanitizer's runtime first, if any).
        self.preload = " ".join(filter(None, [os.environ.get("TEST_PRELOAD_FIRST"), self.lib]))

    def path(self, name):
        """A fresh path inside this test's private directory."""
        return os.path.join(self.tmp, name)

    def env(self, P=None, gat=None, trace=None, preload=True, est_cycle_ms=None, eta=None, **extra):
        """An environment with LD_PRELOAD and APSHIM_* set; the table is private to the test.
        Extra keyword arguments become environment variables (values str()-ed)."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("APSHIM_")}
        env.pop("LD_PRELOAD", None)
        env.pop("TEST_PRELOAD_FIRST", None)
        if preload:
            env["LD_PRELOAD"] = self.preload
        env["APSHIM_GAT"] = gat or self.path("gat")
        if P is not None:
            env["APSHIM_P"] = str(P)
        if trace:
            env["APSHIM_TRACE"] = trace
        if est_cycle_ms is not None:
            env["APSHIM_EST_CYCLE_MS"] = str(est_cycle_ms)
        if eta is not None:
            env["APSHIM_ETA"] = str(eta)
        for k, v in extra.items():
            env[k] = str(v)
        return env

    def status(self, env):
        """`apshim status --json` against env's table, as a dict (None if the command fails; before
        any job created the table it is an empty table: no jobs)."""
        r = subprocess.run([self.cli, "status", "--json"], env=env, capture_output=True, text=True, timeout=10)
        if r.returncode != 0:
            return None
        return json.loads(r.stdout)

    def spawn(self, argv, env, **kw):
        return subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)

    def run(self, argv, env, timeout=60, **kw):
        return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout, **kw)


def read_trace(path):
    """APSHIM_TRACE rows as dicts of floats/ints: time_ms, desire, allotment, usage, inefficiency, busy."""
    rows = []
    with open(path) as f:
        for row in csv.DictReader(f):
            rows.append({k: (float(v) if k in ("time_ms", "inefficiency", "busy") else int(v)) for k, v in row.items()})
    return rows


def thread_names(pid):
    """Names (comm) of the threads of pid, from /proc."""
    names = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/comm") as f:
                    names.append(f.read().strip())
            except OSError:
                pass
    except OSError:
        pass
    return names


def count_threads(pid, name_prefix=None):
    names = thread_names(pid)
    return len([n for n in names if name_prefix is None or n.startswith(name_prefix)])


def wait_for(predicate, timeout, interval=0.02):
    """Polls predicate() until it returns a truthy value or timeout seconds pass; returns the value."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(interval)


def job_of(status, pid):
    if not status:
        return None
    for j in status["jobs"]:
        if j["pid"] == pid:
            return j
    return None


class Check:
    """Collects failures so a test reports every broken expectation, then exits non-zero."""

    def __init__(self, name):
        self.name = name
        self.failures = []

    def expect(self, cond, what):
        print(("ok   " if cond else "FAIL ") + what, flush=True)
        if not cond:
            self.failures.append(what)
        return cond

    def done(self):
        if self.failures:
            print(f"{self.name}: {len(self.failures)} failed", flush=True)
            sys.exit(1)
        print(f"{self.name}: all passed", flush=True)
        sys.exit(0)


def cpu_seconds(pid):
    """CPU seconds (user + system) used so far by all threads of pid, from /proc; None once gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def cpus_used(proc, skip_s=0.3, interval=0.05):
    """Waits for the Popen `proc` to exit and returns the processors it kept busy on average,
    measured from /proc (CPU seconds / wall seconds) from skip_s after now until its last sample
    before exit: what the kernel says it consumed, not what the shim counted. None when it ran
    too briefly to say."""
    time.sleep(skip_s)
    samples = []
    while proc.poll() is None:
        c = cpu_seconds(proc.pid)
        if c is not None:
            samples.append((time.monotonic(), c))
        time.sleep(interval)
    if len(samples) < 5 or samples[-1][0] - samples[0][0] < 0.5:
        return None
    (t0, c0), (t1, c1) = samples[0], samples[-1]
    return (c1 - c0) / (t1 - t0)


def usable_cpus():
    return len(os.sched_getaffinity(0))


class CoRunner:
    """A stand-in co-runner (tests/programs/gat_job) holding the rest of a table of P processors
    with desire P, so that a job started in the same table gets allotment 1 (throttled)."""

    def __init__(self, shim, env, P, seconds=120):
        self.proc = subprocess.Popen([os.path.join(shim.build_dir, "tests", "programs", "gat_job"), str(P),
                                      str(int(seconds * 1000))], env=env, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True)
        wait_for(lambda: shim.status(env) and len(shim.status(env)["jobs"]) >= 1, 10)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.proc.terminate()
        self.proc.wait(timeout=10)
