"""A oneTBB job in a serial phase drops to desire 1 and its co-runner's allotment rises."""
import sys

from apshim_test import Check, Shim, read_trace, wait_for

build, prog = sys.argv[1], sys.argv[2]
shim = Shim(build)
check = Check("tbb.serial_phase")
trace_a = shim.path("a.csv")
env = shim.env(P=4)
# A: short parallel rounds separated by 400 ms serial phases. B: ample parallelism throughout.
b = shim.spawn([prog, "400", "400", "200"], env)
a = shim.spawn([prog, "5", "400", "200", "400"], dict(env, APSHIM_TRACE=trace_a))
saw = []


def b_gets_three():
    s = shim.status(env)
    if s and len(s["jobs"]) == 2:
        saw.append(sorted(j["allotment"] for j in s["jobs"]))
        return [1, 3] in saw
    return False


check.expect(wait_for(b_gets_three, 20), f"during A's serial phase the allotments become 1 + 3 (saw {saw[-5:]})")
out_a, _ = a.communicate(timeout=60)
check.expect(a.returncode == 0 and "checksum=" in out_a, "A finished with its answer")
rows = read_trace(trace_a)
# A cycle that ends just as the next round starts publishes the desire the job lent during the
# phase (APSHIM_LEND_MS: asked back at once), though it measured no work: only cycles followed by
# another quiet one count.
serial_rows = [r for r, nxt in zip(rows, rows[1:]) if r["busy"] < 0.05 and nxt["busy"] < 0.05]
check.expect(serial_rows and all(r["desire"] == 1 for r in serial_rows[1:]),
             f"A's cycles with no task work estimate desire 1 (not: {[r for r in serial_rows[1:] if r['desire'] != 1][:3]})")
check.expect(any(r["inefficiency"] > 0.9 for r in rows), "a serial phase reads inefficiency near 1")
b.terminate()
b.communicate(timeout=60)
check.done()
