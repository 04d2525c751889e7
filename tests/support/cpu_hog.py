"""Load no apshim table sees: a CPU hog, a process outside the shim and its table (no LD_PRELOAD,
no APSHIM_*) in a session of its own, spinning on one CPU, as a user's compile or browser would.

    with OutsideHog(): ...      (apshim_test's callers, bench/real_job.py's BENCH_OUTSIDE_HOG)

Run as a script, it spins until its parent exits (checked every few tens of milliseconds), so
that a hog outlives no test or bench run that is killed before it can stop it."""
import os
import subprocess
import sys


class OutsideHog:
    """The hog for as long as the `with` lasts."""

    def __enter__(self):
        env = {k: v for k, v in os.environ.items() if not k.startswith("APSHIM_")}
        env.pop("LD_PRELOAD", None)
        self.proc = subprocess.Popen([sys.executable, os.path.abspath(__file__)], env=env, start_new_session=True)
        return self

    def __exit__(self, *exc):
        self.proc.kill()
        self.proc.wait()


if __name__ == "__main__":
    parent = os.getppid()
    while os.getppid() == parent:
        for _ in range(500_000):
            pass
