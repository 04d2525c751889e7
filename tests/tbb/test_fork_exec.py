"""fork() and exec() under the shim never deadlock or change results: a plain child, an exec'd
TBB child (a job of its own in the table), and the parent all finish with the right answers."""
import re
import sys

from apshim_test import Check, Shim

build, prog, rounds = sys.argv[1], sys.argv[2], sys.argv[3]
shim = Shim(build)
check = Check("tbb.fork_exec")
native = shim.native([prog, rounds], timeout=60)
env = shim.env(P=4)
for attempt in range(3):
    r = shim.run([prog, rounds], env, timeout=60)
    check.expect(r.returncode == 0, f"run {attempt}: parent and both children succeed ({r.stdout.strip()})")
    check.expect(re.findall(r"checksum=\d+", r.stdout) == re.findall(r"checksum=\d+", native.stdout) and
                 len(re.findall("checksum=", r.stdout)) == 2, f"run {attempt}: same answers from parent and exec'd child")
    check.expect(not [l for l in r.stderr.splitlines() if l.startswith("apshim[")], f"run {attempt}: the shim said nothing")
s = shim.status(env)
check.expect(s is not None and s["jobs"] == [], "no rows left behind by parent or children")
check.done()
