"""The processor count a job creates the table with (default_processors) follows the CPU quota of
the job's own cgroup and its ancestors, cgroup v1 or v2: this test makes a cgroup with a quota of
half a CPU and a child cgroup without a quota of its own, starts a stand-in job (gat_job, which
creates the table with APSHIM_P's default) in the child and expects the table's P to be 1; then a
real preloaded job runs there and the quota is lifted while it runs: the table's P must follow
(a container resized in place). It needs root (or a delegated cgroup) and more than one CPU; where the machine does not
allow it, it prints a SKIP line saying why and passes. The parsing itself is unit-tested on fake
trees (tests/unit/test_options.cpp)."""
import json
import os
import subprocess
import sys

from apshim_test import Check, Shim, job_of, wait_for

build = sys.argv[1]
shim = Shim(build)
check = Check("shim.cgroup_quota")


def skip(why):
    print(f"SKIP {why}", flush=True)
    check.done()


def own_cgroups():
    """{controller or '' for v2: path} from /proc/self/cgroup."""
    out = {}
    with open("/proc/self/cgroup") as f:
        for line in f:
            hid, controllers, path = line.rstrip("\n").split(":", 2)
            if hid == "0" and controllers == "":
                out[""] = path
            for c in controllers.split(","):
                out[c] = path
    return out


def mounts():
    """[(mount point, fstype, super options)] of the cgroup file systems."""
    found = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            pre, post = line.split(" - ", 1)
            fstype, _source, opts = post.split()[:3]
            if fstype in ("cgroup", "cgroup2"):
                found.append((pre.split()[4], fstype, opts.split(",")))
    return found


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


cpus = len(os.sched_getaffinity(0))
if cpus < 2:
    skip(f"one CPU in the affinity mask: a quota of one CPU would not show")
if os.geteuid() != 0:
    skip("not root: cannot create a cgroup")

own = own_cgroups()
v1 = [m for m, t, o in mounts() if t == "cgroup" and "cpu" in o]
v2 = [m for m, t, o in mounts() if t == "cgroup2"]
outer = inner = None
if v1 and "cpu" in own:
    base = os.path.join(v1[0], own["cpu"].lstrip("/"))
    outer = os.path.join(base, f"apshim-test-{os.getpid()}")
    inner = os.path.join(outer, "job")
    try:
        os.mkdir(outer)
        os.mkdir(inner)
        write(os.path.join(outer, "cpu.cfs_period_us"), "100000")
        write(os.path.join(outer, "cpu.cfs_quota_us"), "50000")
    except OSError as e:
        skip(f"cgroup v1 cpu controller at {v1[0]}: cannot make a cgroup with a quota ({e})")
    kind = "v1"
elif v2 and "" in own:
    base = os.path.join(v2[0], own[""].lstrip("/"))
    outer = os.path.join(base, f"apshim-test-{os.getpid()}")
    inner = os.path.join(outer, "job")
    try:
        if "cpu" not in open(os.path.join(base, "cgroup.subtree_control")).read().split():
            write(os.path.join(base, "cgroup.subtree_control"), "+cpu")
        os.mkdir(outer)
        write(os.path.join(outer, "cgroup.subtree_control"), "+cpu")
        os.mkdir(inner)
        write(os.path.join(outer, "cpu.max"), "50000 100000")
    except OSError as e:
        skip(f"cgroup v2 at {v2[0]}: cannot make a cgroup with a cpu.max quota ({e})")
    kind = "v2"
else:
    skip("no cgroup hierarchy with the cpu controller that this process is in")

gat_job = os.path.join(build, "tests", "programs", "gat_job")


def created_P(env, cgroup=None):
    """P of the table a stand-in job creates (in `cgroup`, when given): its default_processors()."""
    move = 'echo $$ > "$1/cgroup.procs" && cat /proc/self/cgroup >&2 && ' if cgroup else ""
    r = subprocess.run(["sh", "-c", move + 'exec "$2" 1 50', "sh", cgroup or "", gat_job], env=env,
                       capture_output=True, text=True, timeout=30)
    print(r.stderr.strip(), flush=True)
    s = shim.status(env)
    return s["P"] if r.returncode == 0 and s else f"none (rc {r.returncode})"


try:
    # No APSHIM_P: the default is what is looked at.
    P = created_P(shim.env(preload=False, gat=shim.path("in")), inner)
    check.expect(P == 1, f"{kind}: a job in a child cgroup of one with a quota of 0.5 CPU makes P = 1 (got {P}; {cpus} CPUs)")
    P = created_P(shim.env(preload=False, gat=shim.path("out")))
    check.expect(P == min(cpus, 4096), f"outside that cgroup, P = the {cpus} CPUs of the affinity mask (got {P})")

    # Resized in place (Kubernetes in-place resize): a running job follows the new quota.
    env = shim.env(gat=shim.path("resize"))
    prog = os.path.join(build, "tests", "omp", "omp_work_gcc")
    job = subprocess.Popen(["sh", "-c", 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"', "sh", inner,
                            prog, "imbalanced", "100000", "64"], env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        def table_P():
            s = shim.status(env)
            return s["P"] if s and job_of(s, job.pid) else None
        wait_for(lambda: table_P() is not None, 10)
        check.expect(table_P() == 1, f"a running job's table starts at the quota: P = 1 (got {table_P()})")
        if kind == "v1":
            write(os.path.join(outer, "cpu.cfs_quota_us"), "-1")
        else:
            write(os.path.join(outer, "cpu.max"), "max 100000")
        wait_for(lambda: table_P() == cpus, 10)
        check.expect(table_P() == cpus, f"quota lifted while it runs: the table's P follows to {cpus} (got {table_P()})")
    finally:
        job.kill()
        job.wait()
finally:
    for d in (inner, outer):
        try:
            os.rmdir(d)
        except OSError as e:
            print(f"note: cannot remove {d}: {e}", flush=True)
check.done()
