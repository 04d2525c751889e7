"""Load no apshim table sees: a CPU hog, a process outside the shim and its table (no LD_PRELOAD,
no APSHIM_*) in a session of its own, spinning on one CPU, as a user's compile or browser would.

    with OutsideHog(): ...      (tests/omp/test_outside_load.py, tests/real/realprog.py, bench/real_job.py)

How much of a CPU the hog takes from a job thread beside it is the kernel's to decide, and it
decides differently by machine: with autogroup (this project's VMs: a session in the root cgroup
is a scheduling group of its own) the hog's session gets half of any CPU it shares, and a team
that meets at every region's end waits there for the kernel to switch the hog out; without it (a
task in a cgroup of its own, as in CI, where autogroup does not apply) the hog gets a thread's
share, which the same team barely notices (omp_phases' burst: 128 000 regions wide beside the hog
against 84 000 with both threads on one CPU of their own). Tests that need the first case run the
job at JOB_NICE, as a batch job would be started: the hog then takes most of a shared CPU with
autogroup on or off (the same burst: 250-6 200 regions wide, 83 000-88 000 on one CPU).

Run as a script, it spins until its parent exits (checked every few tens of milliseconds), so
that a hog outlives no test or bench run that is killed before it can stop it."""
import os
import subprocess
import sys

# The command prefix that runs a job beside the hog as a batch job: below the hog's priority.
JOB_NICE = ("nice", "-n", "5")


class OutsideHog:
    """The hog for as long as the `with` lasts. With `nice`, a hog that yields to the job: niced, and
    in the caller's session, where its nice value counts against the job's with autogroup on or off
    (in a session of its own, autogroup would give it its group's full share whatever its nice).
    With `cpu`, a hog that keeps to that CPU (taskset)."""

    def __init__(self, nice=None, cpu=None):
        self.nice, self.cpu = nice, cpu

    def __enter__(self):
        env = {k: v for k, v in os.environ.items() if not k.startswith("APSHIM_")}
        env.pop("LD_PRELOAD", None)
        cmd = [sys.executable, os.path.abspath(__file__)]
        if self.nice is not None:
            cmd = ["nice", "-n", str(self.nice), *cmd]
        if self.cpu is not None:  # pinned there, as a process under taskset would be
            cmd = ["taskset", "-c", str(self.cpu), *cmd]
        self.proc = subprocess.Popen(cmd, env=env, start_new_session=self.nice is None)
        return self

    def __exit__(self, *exc):
        self.proc.kill()
        self.proc.wait()


if __name__ == "__main__":
    parent = os.getppid()
    while os.getppid() == parent:
        for _ in range(500_000):
            pass
