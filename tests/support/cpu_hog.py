"""A CPU hog: spins on one CPU until its parent exits (checked every few tens of milliseconds), so
that a hog started in a session of its own (apshim_test.OutsideHog, bench/real_job.py's
BENCH_OUTSIDE_HOG) outlives no test or bench run that is killed before it can stop it."""
import os

parent = os.getppid()
while os.getppid() == parent:
    for _ in range(500_000):
        pass
