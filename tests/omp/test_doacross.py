"""A doacross loop (each iteration waits for the one before) finishes under the shim while its
allotment is below its team (a stand-in co-runner holds half the table): the shim does not park
a thread inside a doacross loop, where it may own the iteration its teammates wait for."""
import subprocess
import sys

from apshim_test import Check, Shim, wait_for

build, prog = sys.argv[1], sys.argv[2]
shim = Shim(build)
check = Check("omp.doacross")
native = shim.native([prog, "400"], timeout=60)
check.expect(native.returncode == 0 and native.stdout.startswith("ok"), f"native run ({native.returncode})")
env = shim.env(P=4)
co = subprocess.Popen([f"{shim.build_dir}/tests/programs/gat_job", "4", "60000"], env=env,
                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
try:
    check.expect(wait_for(lambda: (shim.status(env) or {}).get("jobs"), 10), "the co-runner joined the table")
    hung = 0
    for _ in range(5):
        try:
            r = shim.run([prog, "400"], env, timeout=20)
            check.expect(r.returncode == 0 and r.stdout == native.stdout, f"same answer under the shim ({r.returncode})")
        except subprocess.TimeoutExpired:
            hung += 1
    check.expect(hung == 0, f"no run hung (20 s each; {hung} of 5 did)")
finally:
    co.kill()
    co.wait()
check.done()
