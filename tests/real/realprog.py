"""Shared driver of the tests in tests/real: one unmodified Debian program, run natively and
under the shim in three modes, each run bounded and measured from /proc (apshim_test.run_measured).

  native     no shim: the reference output, and proof the workload is parallel (two or more
             threads each did at least 15% of the CPU work); its CPU use is printed
  alone      the shim, no co-runner: same output, the shim attached (its APSHIM_TRACE has rows)
  throttled  a stand-in co-runner (`gat_job 2 ...`) holds the table at APSHIM_P=2 first, so the
             program's allotment is 1: same output, the table gave it 1 (trace), and the
             process's CPU seconds (utime + stime, /proc/PID/stat) over its wall time stay
             <= THROTTLED_MAX_CPUS from the first /proc sample that saw the shim's controller
             thread (the program joins the table at its first parallel construct; before it, it is
             no job, and other thread pools may spin: scikit-learn's import, with OpenBLAS's
             pthreads, used 1.2-1.9 CPUs for its first second). Only meaningful when the program
             could have used more: if its CPU use plus the machine's idle CPUs (/proc/stat) over
             that stretch stay below MIN_CAPACITY (other load), that check is inconclusive and
             the test exits SKIP (77) unless another check failed
  P8         the shim with APSHIM_P=8 on fewer cores: same output, no crash
  beside a hog  (beside_hog, where a test asks) the shim alone in its table, a process outside it
             spinning on one CPU: same output; the test checks what the trace shows

A run that outlives its time-out gets gdb backtraces (when gdb is installed) printed, then its
whole process group is SIGKILLed: no test leaves processes behind.
"""
import glob
import hashlib
import os
import re
import shutil
import subprocess
import sys

from apshim_test import SKIP, Check, Shim, read_trace, require_two_cpus, run_measured, wait_for
from cpu_hog import JOB_NICE, OutsideHog

THROTTLED_MAX_CPUS = 1.15
# The throttled check has teeth only when the program could have used more than one CPU: its CPU
# use plus the machine's idle CPUs over the run must reach this much, or the test is skipped.
MIN_CAPACITY = 1.5
NATIVE_TIMEOUT_S = 60


# Debian's Python, and the OpenMP builds of the BLAS that Debian installs beside the default one;
# a program gets one by its folder first in LD_LIBRARY_PATH, as their docs say (library_path_first).
PYTHON = "/usr/bin/python3"
OPENBLAS_OPENMP = "/usr/lib/x86_64-linux-gnu/openblas-openmp"
BLIS_OPENMP = "/usr/lib/x86_64-linux-gnu/blis-openmp"


def library_path_first(folder):
    """LD_LIBRARY_PATH with `folder` ahead of the environment's own."""
    old = os.environ.get("LD_LIBRARY_PATH")
    return folder + (":" + old if old else "")


def work_lines(tag, m):
    """Every line a tests/real *_work.py script printed, less the time on its last one (an
    output_of for RealProgram)."""
    return [line.split(" time_s=")[0] for line in m.stdout.splitlines()]


def require(check, *programs):
    """Fails the test at once (with what to install) when a program or file is missing."""
    missing = [p for p in programs if not (os.path.exists(p) or shutil.which(p))]
    if missing:
        print(f"missing {missing}: install the packages of scripts/install-deps.sh", flush=True)
        check.expect(False, f"{', '.join(missing)} installed")
        check.done()


def tail(text, lines=15):
    return "\n".join(text.strip().splitlines()[-lines:])


def file_sha256(path):
    """The SHA-256 of a program's output file, hex; None when it is missing (a run that wrote none)."""
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return None


def trace_rows(pattern):
    rows = []
    for path in glob.glob(pattern.replace("%p", "*")):
        try:
            rows += read_trace(path)
        except (OSError, ValueError, KeyError):
            pass
    return rows


class RealProgram:
    """make_argv(tag) -> argv for one run (its outputs named after tag, in the test's directory);
    output_of(tag, measured) -> what must be identical to the native run's; env: extra
    environment for every run (e.g. LD_LIBRARY_PATH); cwd_of(tag) -> working directory;
    threads: how many of the program's threads can work at once, when known (alone, no cycle
    may count more threads at work: the shim's own controller thread is none of them); same:
    (output, the native one) -> (alike, what was compared), for a program whose own runs differ
    natively (else outputs must be identical)."""

    def __init__(self, name, build, make_argv, output_of, env=None, cwd_of=None, threads=None, same=None):
        require_two_cpus("a program's parallel work and its throttling to one CPU need two")
        self.shim = Shim(build)
        self.check = Check(name)
        self.make_argv, self.output_of = make_argv, output_of
        self.extra = env or {}
        self.cwd_of = cwd_of or (lambda tag: None)
        self.gat_job = os.path.join(self.shim.build_dir, "tests", "programs", "gat_job")
        self.reference = None
        self.timeout = NATIVE_TIMEOUT_S
        self.inconclusive = False
        self.last_rows = []  # the last throttled() run's trace rows
        self.threads = threads
        self.same = same

    def run(self, tag, env, timeout, prefix=()):
        m = run_measured([*prefix, *self.make_argv(tag)], env, timeout, cwd=self.cwd_of(tag))
        masks = ", ".join(f"{k}: {v}" for k, v in sorted(m.masks.items(), key=lambda kv: -kv[1]))
        print(f"[{tag}] {m.describe()}; threads {len(m.threads)}; CPU masks (thread-samples) {masks}", flush=True)
        if m.timed_out:
            recent = m.cpus(start_s=max(0.0, timeout - 10))
            state = "stuck" if recent < 0.05 else f"still computing ({recent:.2f} CPUs in its last 10 s: slow, or spinning)"
            print(f"[{tag}] timed out: killed after {timeout:.0f} s, {state}; backtraces:\n{m.backtrace}", flush=True)
        elif m.returncode != 0:
            print(f"[{tag}] stderr:\n{tail(m.stderr)}", flush=True)
        return m

    def ok(self, tag, m):
        """rc 0 and the same output as natively; returns whether both held."""
        c = self.check
        if not c.expect(not m.timed_out and m.returncode == 0,
                        f"{tag}: exits 0 within {self.timeout:.0f} s ({'hung' if m.timed_out else f'rc {m.returncode}'})"):
            return False
        out = self.output_of(tag, m)
        if self.same:
            alike, what = self.same(out, self.reference)
            return c.expect(alike, f"{tag}: output the same as the native run's ({what})")
        return c.expect(out == self.reference, f"{tag}: output identical to the native run's ({out!r:.80} vs {self.reference!r:.80})")

    def native(self):
        m = self.run("native", self.shim.env(preload=False, **self.extra), NATIVE_TIMEOUT_S)
        if not self.check.expect(m.returncode == 0, f"native run exits 0 (rc {m.returncode})"):
            self.check.done()
        self.reference = self.output_of("native", m)
        total = sum(s for _, s in m.threads.values()) or 1.0
        workers = sorted(((s / total, n) for n, s in m.threads.values()), reverse=True)
        print("native per-thread share of CPU: " + ", ".join(f"{n} {f:.0%}" for f, n in workers[:6]), flush=True)
        self.check.expect(len([f for f, _ in workers if f >= 0.15]) >= 2,
                          "natively the work is parallel: >= 2 threads each did >= 15% of the CPU work")
        # Under the shim a run may take longer (throttled: one CPU; other load may grow); a hang
        # ends here. On an idle 2-core machine native runs take 2-6 s.
        self.timeout = min(90.0, max(25.0, 5 * m.wall_s))
        return m

    def alone(self, tag="alone", **more_env):
        """Alone in its table; `more_env`: the program's own settings for this run, `tag` names it."""
        name = re.sub(r"\W+", "-", tag)
        trace = self.shim.path(f"trace-{name}.%p")
        m = self.run(tag, self.shim.env(trace=trace, gat=self.shim.path(f"gat-{name}"), **{**self.extra, **more_env}),
                     self.timeout)
        if self.ok(tag, m):
            rows = trace_rows(trace)
            self.check.expect(len(rows) > 0, f"{tag}: the shim attached (APSHIM_TRACE has {len(rows)} rows)")
            if self.threads and rows:
                most = max(r["usage"] for r in rows)
                self.check.expect(most <= self.threads, f"{tag}: at most {self.threads} threads measured at work in a cycle ({most})")
        return m

    def throttled(self, tag="throttled", max_cpus=THROTTLED_MAX_CPUS, **more_env):
        """Allotment 1 (a co-runner, gat_job 2, holds the rest of a P=2 table); `more_env`: the
        program's own settings for this run (OMP_DYNAMIC=true), `tag` names it. `max_cpus`: the CPUs
        it may use on average, None where the shim leaves it more by design (the caller checks why,
        in the trace rows left in self.last_rows)."""
        name = re.sub(r"\W+", "-", tag)
        gat = self.shim.path(f"gat-{name}")
        env = self.shim.env(P=2, gat=gat, **{**self.extra, **more_env})
        co = subprocess.Popen([self.gat_job, "2", str(int((self.timeout + 30) * 1000))], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            joined = wait_for(lambda: (self.shim.status(env) or {}).get("jobs"), 10)
            if not self.check.expect(bool(joined), f"{tag}: the co-runner (gat_job 2) holds the table at P=2"):
                return None
            trace = self.shim.path(f"trace-{name}.%p")
            m = self.run(tag, dict(env, APSHIM_TRACE=trace), self.timeout)
            self.check.expect(co.poll() is None, f"{tag}: the co-runner was there for the whole run")
            self.last_rows = []
            if self.ok(tag, m):
                rows = self.last_rows = trace_rows(trace)
                allot = sorted({r["allotment"] for r in rows})
                self.check.expect(rows and allot == [1], f"{tag}: the table gave the program allotment 1 ({allot})")
            since = m.attached_s or 0.0
            cpus, idle = m.cpus(since), m.idle_cpus(since)
            could = min(len(os.sched_getaffinity(0)), cpus + idle)
            what = (f"{cpus:.2f} CPUs from {since:.2f} s, when the shim attached, to the end; whole run "
                    f"{m.cpu_s:.2f} CPU s / {m.wall_s:.2f} s = {m.cpus():.2f} CPUs, peak over 1 s "
                    f"{m.peak_cpus():.2f}; machine idle meanwhile {idle:.2f} CPUs")
            if max_cpus is None:
                print(f"{tag} at allotment 1: {what}", flush=True)
            elif m.returncode == 0 and cpus <= max_cpus and could < MIN_CAPACITY:
                # Other load left the program less than it could use anyway: no evidence either way.
                print(f"INCONCLUSIVE {tag} at allotment 1: {what}: it could have used only {could:.2f} < "
                      f"{MIN_CAPACITY} CPUs, so its low use does not show throttling (machine busy)", flush=True)
                self.inconclusive = True
            else:
                self.check.expect(m.returncode == 0 and cpus <= max_cpus,
                                  f"{tag} at allotment 1: the run completed using <= {max_cpus} CPUs ({what})")
            return m
        finally:
            co.kill()
            co.wait()

    def p8(self, tag="P8", **more_env):
        """APSHIM_P=8, above the cores; `more_env` and `tag` as for alone()."""
        # A table of its own: the alone run's, created with P = 2, would make the shim ignore
        # APSHIM_P=8 (it did until the twenty-seventh session; that case is tbb.needs_threads').
        name = re.sub(r"\W+", "-", tag.lower())
        trace = self.shim.path(f"trace-{name}.%p")
        m = self.run(tag, self.shim.env(P=8, gat=self.shim.path(f"gat-{name}"), trace=trace,
                                        **{**self.extra, **more_env}), self.timeout)
        self.ok(tag, m)
        return m

    def beside_hog(self):
        """The shim alone in its table beside a CPU hog outside it (cpu_hog.OutsideHog), the
        program niced below it as a batch job (cpu_hog.JOB_NICE: then the hog takes most of any
        CPU they share, whatever the kernel's grouping): the same output; returns the run and its
        trace rows."""
        trace = self.shim.path("trace-hog.%p")
        with OutsideHog():
            m = self.run("beside a hog", self.shim.env(P=2, gat=self.shim.path("gat-hog"), trace=trace, **self.extra),
                         self.timeout, prefix=JOB_NICE)
        self.ok("beside a hog", m)
        return m, trace_rows(trace)

    def done(self):
        """Exits: 1 if a check failed (the test's directory, with inputs, outputs and traces, is
        kept: apshim_test), else SKIP if the throttled check could not judge, else 0."""
        if self.inconclusive and not self.check.failures:
            print(f"{self.check.name}: every other check passed; the machine was too busy to judge throttling: "
                  "skipped", flush=True)
            sys.exit(SKIP)
        self.check.done()

    def all_modes(self):
        self.native()
        self.alone()
        self.throttled()
        self.p8()
        self.done()


def build_dir():
    if len(sys.argv) < 2:
        sys.exit(f"usage: {sys.argv[0]} BUILD_DIR")
    return sys.argv[1]
