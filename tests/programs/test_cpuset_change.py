"""A job whose cpuset shrinks and grows again while it runs confined (a container's CPUs changed,
Kubernetes' CPU manager moving its shared pool). The kernel moves the threads whose CPUs the
cpuset took onto the CPUs it keeps, and gives each thread back the mask it asked for when the
cpuset grows again (Linux 6.2 and later; before, every thread gets the whole new cpuset).

Until the forty-first session the shim took the threads the kernel moved for threads the program
had bound itself: it stopped confining for good ("the program sets CPU affinity itself"), and its
own mask, kept by the kernel, came back with the cpuset: the program's threads stayed on one CPU
to the end, alone too.

A real libgomp program (tests/omp/omp_work, short regions of static loops) and a real oneTBB
program (tests/tbb/tbb_rounds) run throttled (a stand-in co-runner holds the rest of a P = 2
table: allotment 1) in a cpuset of the test's two CPUs that this test makes (cgroup v1's cpuset
hierarchy or cgroup v2's cpuset controller; root). Once the job is confined to one CPU, the
cpuset shrinks to the other CPU, then grows back. Checked: the shim never stops confining (no
"stopped confining" line), the job is on one CPU again once the cpuset is back, all of the job's
threads are on both CPUs again once the co-runner has left (the shim still follows the table),
and the native answer.

Then a cpuset that grows beyond the CPUs the process started with. A process started on its whole
cpuset (no taskset) runs natively on every CPU the cpuset gains. Until the forty-third session
the shim's controller and the threads it let go asked the kernel for the original mask, which it
keeps: the table's P (the CPUs counted at start) stayed at one, a co-runner arriving after the
growth held the very processor the job held (two rows on processor 0 of a P = 1 table), and the
job was never confined. Now the process follows its cpuset: the libgomp program (two threads)
starts alone in a cpuset of one CPU (a table of P = 1), the cpuset grows to both CPUs, and then
the table's P must be 2, the job confined to one CPU beside a stand-in co-runner (allotment 1 of
2), on both CPUs once it left, with the native answer."""
import os
import sys
import time

from apshim_test import Check, CoRunner, Shim, checksum, program_cpu_masks, require_two_cpus, wait_for

build, omp_prog, tbb_prog = sys.argv[1:4]
require_two_cpus("a cpuset that shrinks to one CPU needs two")
cpus = sorted(os.sched_getaffinity(0))[:2]
both = f"{cpus[0]}-{cpus[1]}" if cpus[1] == cpus[0] + 1 else f"{cpus[0]},{cpus[1]}"


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def read(path):
    with open(path) as f:
        return f.read().strip()


def make_cpuset():
    """(the cgroup's directory, why not): a fresh cpuset cgroup of the test's two CPUs."""
    name = f"apshim-test-cpuset-{os.getpid()}"
    v1 = "/sys/fs/cgroup/cpuset"
    v2 = "/sys/fs/cgroup"
    try:
        if os.path.exists(os.path.join(v1, "cpuset.cpus")):
            path = os.path.join(v1, name)
            os.mkdir(path)
            write(os.path.join(path, "cpuset.mems"), read(os.path.join(v1, "cpuset.mems")))
        elif "cpuset" in read(os.path.join(v2, "cgroup.controllers")).split():
            write(os.path.join(v2, "cgroup.subtree_control"), "+cpuset")
            path = os.path.join(v2, name)
            os.mkdir(path)
        else:
            return None, "no cpuset controller (cgroup v1 or v2)"
        write(os.path.join(path, "cpuset.cpus"), both)
        return path, None
    except OSError as e:
        return None, f"a cpuset cannot be made here ({e}; root needed)"


cgroup, why = make_cpuset()
if not cgroup:
    print(f"SKIP: {why}")
    sys.exit(77)

shim = Shim(build)
check = Check("shim.cpuset_change")
programs = {
    "libgomp": [omp_prog, "static", "600", "150"],  # 600 regions of 64 items of 150 us: about 6 s on one CPU
    "oneTBB": [tbb_prog, "30", "200", "1000"],  # 30 rounds of 200 items of 1 ms: about 6 s on one CPU
}


def one_cpu(pid):
    """The one CPU all of the job's threads are on, or None."""
    masks = program_cpu_masks(pid)
    return next(iter(masks)) if len(masks) == 1 and next(iter(masks)) in map(str, cpus) else None


def join_cgroup():
    write(os.path.join(cgroup, "cgroup.procs"), str(os.getpid()))


def stop(proc, co):
    """Kills what a failed check left running: the program, the co-runner."""
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    if co and co.proc.poll() is None:
        co.__exit__()


def corunner_leaves(name, proc, co, seconds):
    """The co-runner leaves: every thread of the job back on both CPUs within `seconds`; then the
    job's (stdout, stderr) when it ends."""
    co.__exit__()
    whole = wait_for(lambda: program_cpu_masks(proc.pid) == {both}, seconds)
    check.expect(whole, f"{name}: every thread on both CPUs once the co-runner left ({program_cpu_masks(proc.pid)})")
    return proc.communicate(timeout=120)


natives = {}  # argv -> the native stdout: omp_work's checksum does not depend on the team's size,
# so the grown run (two threads from a cpuset of one CPU) shares libgomp's (as many as the CPUs)


def expect_native_answer(name, proc, out, argv):
    if tuple(argv) not in natives:
        natives[tuple(argv)] = shim.native(argv, timeout=120).stdout
    native = natives[tuple(argv)]
    check.expect(proc.returncode == 0 and checksum(out) and checksum(out) == checksum(native),
                 f"{name}: the native answer ({proc.returncode}: {out.strip()}; natively {native.strip()})")


try:
    for name, argv in programs.items():
        write(os.path.join(cgroup, "cpuset.cpus"), both)
        env = shim.env(P=2, APSHIM_LOG="info")  # "stopped confining" for the program's binding is info
        co = CoRunner(shim, env, 2)
        proc = shim.spawn(argv, env, preexec_fn=join_cgroup)
        try:
            on = wait_for(lambda: one_cpu(proc.pid), 5)
            check.expect(on is not None, f"{name}: confined to one CPU at allotment 1 ({program_cpu_masks(proc.pid)})")
            if on is not None:
                other = str(cpus[1] if on == str(cpus[0]) else cpus[0])
                write(os.path.join(cgroup, "cpuset.cpus"), other)
                time.sleep(0.5)
                shrunk = program_cpu_masks(proc.pid)
                write(os.path.join(cgroup, "cpuset.cpus"), both)
                again = wait_for(lambda: one_cpu(proc.pid), 3)
                check.expect(again is not None, f"{name}: on one CPU again once the cpuset is back (shrunk to CPU "
                             f"{other}: {shrunk}; now {program_cpu_masks(proc.pid)})")
            out, err = corunner_leaves(name, proc, co, 3)
        finally:
            stop(proc, co)
        expect_native_answer(name, proc, out, argv)
        said = [line for line in err.splitlines() if line.startswith("apshim")]
        check.expect(not any("stopped confining" in line for line in said), f"{name}: never stopped confining ({said})")

    # Growth beyond the start: no APSHIM_P, so the job's table counts the CPUs it starts on.
    write(os.path.join(cgroup, "cpuset.cpus"), str(cpus[0]))
    argv = programs["libgomp"]
    env = shim.env(gat=shim.path("gat-grown"), OMP_NUM_THREADS=2, APSHIM_LOG="info")  # a table of its own
    proc = shim.spawn(argv, env, preexec_fn=join_cgroup)
    co = None
    try:
        p_of = lambda: (shim.status(env) or {}).get("P")
        # The job makes the table (`apshim status` before it would make one of P = 2).
        wait_for(lambda: os.path.exists(env["APSHIM_GAT"]), 5)
        check.expect(wait_for(lambda: p_of() == 1, 5), f"grown: the table's P is 1 in a cpuset of one CPU ({p_of()})")
        write(os.path.join(cgroup, "cpuset.cpus"), both)
        check.expect(wait_for(lambda: p_of() == 2, 5), f"grown: the table's P follows the cpuset to 2 ({p_of()})")
        co = CoRunner(shim, env, 2)
        on = wait_for(lambda: one_cpu(proc.pid), 5)
        rows = (shim.status(env) or {}).get("jobs", [])
        check.expect(on is not None, f"grown: confined to one CPU beside a co-runner ({program_cpu_masks(proc.pid)}; "
                     f"table {[(r['name'], r['allotment'], r['processors']) for r in rows]})")
        out, err = corunner_leaves("grown", proc, co, 5)
    finally:
        stop(proc, co)
    expect_native_answer("grown", proc, out, argv)
finally:
    for _ in range(50):  # the cgroup empties as its processes are reaped
        try:
            os.rmdir(cgroup)
            break
        except OSError:
            time.sleep(0.1)
check.done()
