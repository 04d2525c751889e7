"""In a program that uses neither oneTBB nor OpenMP the shim is a no-op: same output, nothing on
stderr (not even for a bad option: complaints wait for a runtime), no table, no extra thread."""
import os
import sys

from apshim_test import Check, Shim

build, prog = sys.argv[1], sys.argv[2]
shim = Shim(build)
check = Check("no_runtime")
native = shim.native([prog])
for extra in ({}, {"APSHIM_ETA": "banana"}, {"APSHIM_DISABLE": "1"}):
    env = shim.env(P=4, **extra)
    r = shim.run([prog], env)
    check.expect(r.returncode == 0 and r.stdout == native.stdout, f"same output and exit status with {extra or 'defaults'}")
    check.expect(r.stderr == "", f"nothing on stderr with {extra or 'defaults'}")
    check.expect(not os.path.exists(env["APSHIM_GAT"]), "no table created")
check.expect("threads=1" in native.stdout, "the program sees one thread natively (sanity)")
# A shell and its children, as `apshim run -- sh -c ...` would preload them.
env = shim.env(P=4)
r = shim.run(["sh", "-c", "echo a | tr a b; ls / > /dev/null"], env)
check.expect(r.stdout == "b\n" and r.stderr == "" and not os.path.exists(env["APSHIM_GAT"]), "shell pipelines unaffected")
# At APSHIM_LOG=info the shim says it found nothing to throttle (a user can tell that from "not
# loaded"), once, and still creates no table.
env = shim.env(P=4, APSHIM_LOG="info")
r = shim.run([prog], env)
lines = [l for l in r.stderr.splitlines() if "nothing to throttle" in l]
check.expect(r.returncode == 0 and len(lines) == 1 and not os.path.exists(env["APSHIM_GAT"]),
             f"at APSHIM_LOG=info one line says there is nothing to throttle ({r.stderr.strip()[:200]})")
check.done()
