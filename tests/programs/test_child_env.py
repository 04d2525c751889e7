"""A program started without the shim runs exactly as natively, even when its parent ran under
the shim (`LD_PRELOAD=libapshim.so bash -c 'env -u LD_PRELOAD prog'`): none of the variables the
shim adds for the runtimes (the shim as oneTBB's ITT collector, short spin-waits) reach it, so
its oneTBB does not load libapshim.so as a collector, and it makes no table row or trace. A
child that keeps the shim keeps them; a value the user set is the user's and stays.
Usage: test_child_env.py BUILD TBB_PROGRAM"""
import os
import sys

from apshim_test import Check, Shim

build, tbb_prog = sys.argv[1], sys.argv[2]
shim = Shim(build)
check = Check("shim.child_env")
ADDED = ("INTEL_LIBITTNOTIFY64", "KMP_BLOCKTIME", "GOMP_SPINCOUNT", "KMP_LIBRARY", "KMP_USE_YIELD",
         "APSHIM_ADDED")
env = shim.env()
for name in ADDED:
    env.pop(name, None)


def child_env(script, extra=None):
    r = shim.run(["/bin/bash", "-c", script], dict(env, **(extra or {})), timeout=30)
    return dict(line.split("=", 1) for line in r.stdout.splitlines() if "=" in line)


kept = child_env("env")
check.expect(all(name in kept for name in ADDED), f"a child that keeps the shim has its settings ({[n for n in ADDED if n not in kept]} missing)")
dropped = child_env("env -u LD_PRELOAD env")
check.expect(not [n for n in ADDED if n in dropped], f"a child started without the shim has none of them ({[n for n in ADDED if n in dropped]})")
user = child_env("env -u LD_PRELOAD env", {"KMP_BLOCKTIME": "7"})
check.expect(user.get("KMP_BLOCKTIME") == "7", "a value the user set stays, with the shim or without it")
check.expect("GOMP_SPINCOUNT" not in user, "while the shim's own additions go")
spawned = child_env("LD_PRELOAD= /usr/bin/env")
check.expect(not [n for n in ADDED if n in spawned], "an exec with an emptied LD_PRELOAD gets none of them either")

# The confirmed case: oneTBB in such a child loaded libapshim.so as its ITT collector, the
# controller started and the child joined the table with a trace.
trace = shim.path("child.%p.csv")
r = shim.run(["/bin/bash", "-c", f"env -u LD_PRELOAD APSHIM_TRACE={trace} {tbb_prog} 20 8 2000"], env, timeout=60)
check.expect(r.returncode == 0, f"the TBB child ran ({r.stderr.strip()[:200]})")
traces = [f for f in os.listdir(shim.tmp) if f.startswith("child.")]
check.expect(not traces, f"the child without the shim wrote no trace ({traces})")
check.expect("apshim" not in r.stderr, "and printed nothing of the shim's")
check.done()
